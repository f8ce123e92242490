"""The hierarchy in a tree: its model, its rows, its paging and its filter."""
