"""Mutation fuzzing of zarrlib against stores written by zarr-python.

A corrupt or hostile store must cost a ``ZarrError`` naming the node or key, never another
exception, a hang, a crash or gigabytes of memory; nothing may write to a store and no
crc32c-protected chunk may be read wrong without an error. This package checks exactly that,
as an outsider would:

* ``seeds``: tiny stores written by zarr-python (and the committed zarr 2.x fixtures), with the
  values each array must read as;
* ``mutate``: hypothesis strategies that turn a seed into a concrete, replayable case (a JSON
  description of edits to metadata documents, chunk, shard and index bytes, the file system, or
  a zip archive of the store);
* ``apply``, ``payloads``, ``ziparchive``: carrying a case out byte for byte (bombs and crafted
  headers included), and which reads a crc32c checksum must catch;
* ``worker``: the process that runs cases under an address-space limit, as the app and CLI would;
* ``runner``: the parent's side of a worker (timeouts, deaths, stacks) and the categories;
* ``campaign``: generation, dispatch, deduplication into distinct defects and reproducers;
* ``__main__``: ``python -m tests.fuzz --count 20000 --seed 7 --jobs 2 --out DIR``.
"""
