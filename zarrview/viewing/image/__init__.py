"""An image plane in view: its state, the reads it plans, its levels, colours and the scene drawn."""
