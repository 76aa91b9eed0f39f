"""`mua view` and `mua review`: pages drawn from a run's recorded files."""
