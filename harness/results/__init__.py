"""A run's result files and everything read from them: records, summary, cost, leaderboard, gate."""
