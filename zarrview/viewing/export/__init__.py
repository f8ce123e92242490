"""Writing what the view shows to files (npy, csv, png) without Qt."""
