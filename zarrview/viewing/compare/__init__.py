"""Two arrays side by side: which plane of the second matches the plane of the first
(``linking``), the difference of two planes (``difference``) and of two whole arrays read block
by block (``whole``)."""
