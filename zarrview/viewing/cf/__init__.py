"""xarray and CF conventions, without Qt: what a geoscience dataset's attributes mean for a view.

Kept apart from the view model so the conventions can be tested against xarray on their own and
so that bad attributes become notes (shown beside the raw values), never exceptions.

Modules: ``time`` (CF "<unit> since <date>" in every calendar, numpy datetime64), ``values``
(masking and unpacking), ``flags`` (categorical legends), ``dims`` (dimension names of v3, v2
and NCZarr arrays), ``coords`` (coordinate variables and their labels), ``conventions``
(which attribute keys are conventions, GeoZarr-style metadata).
"""
