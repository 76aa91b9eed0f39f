"""The libraries of the everyday commands: tasks, play, sweep, export, score (replay), gold check."""
