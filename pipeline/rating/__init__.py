"""Running a rating system over months: its inputs, what is stale, the runner, the one writer and the output checks."""
