"""What a run is and playing it: the plan, selection, building the players, scheduling, the batch call."""
