"""What a sweep would run, checked before Ray starts: its settings, search spaces, sweep files,
the `--dry-run` plan and its cost estimate."""
