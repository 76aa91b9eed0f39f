"""Reading and writing files: hostile JSON and JSON lines, URLs, output guards, the benchmark data folder."""
