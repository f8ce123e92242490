"""The Qt application: thin widgets that build read requests and render the results."""
