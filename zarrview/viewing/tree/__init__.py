"""The hierarchy beyond what the tree has expanded: the walk that lists it and the index that searches it."""
