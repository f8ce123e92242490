"""Measurements on the plane shown, without Qt: the values along a drawn line (``profile``) and
the statistics of a drawn rectangle (``stats``), both read at full resolution on a worker from
the array itself, whatever preview or pyramid level is on screen. ``plane`` holds what both
share: which elements a place of the plane stands for, and the values as the view shows them."""
