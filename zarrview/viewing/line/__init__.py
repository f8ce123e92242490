"""Values drawn as a line: whole 1-D arrays, and the series through a clicked point."""
