"""Projections of a dimension (maximum intensity, time mean, ...) computed chunk by chunk without Qt."""
