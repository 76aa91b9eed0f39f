"""Simulated users: the simulators, the suite every user is scored on, the audit of a run's users."""
