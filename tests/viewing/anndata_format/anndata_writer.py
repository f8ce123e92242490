"""Writes AnnData stores with anndata itself and dumps what anndata reads back from them: the
truth the AnnData tests compare zarrview's reads against.

Run as ``python anndata_writer.py OUT N_OBS [FORMAT [N_VAR [CHUNK]]]`` in an interpreter with anndata: writes
``OUT/adata.zarr`` (Zarr v3, sharded where anndata shards by default, or Zarr v2 with FORMAT
``2``) and, beside it, anndata's own reads: ``obs.csv``/``var.csv`` (``DataFrame.to_csv``),
``X.npy`` and each layer densified (``toarray``), each ``obsm`` embedding, and ``expected.json``
(the index names, column order, categories and the versions that wrote it).
"""

from __future__ import annotations

import json
from importlib.metadata import version
import sys
from pathlib import Path

import anndata as ad
import numpy as np
import pandas as pd
import scipy.sparse as sp
import zarr


def build(n_obs: int, n_var: int, rng: np.random.Generator) -> ad.AnnData:
    cell_types = np.array(["B cell", "T cell", "NK cell", "monocyte", "dendritic"])
    codes = rng.integers(-1, len(cell_types), n_obs)  # -1: a missing label
    obs = pd.DataFrame(
        {
            "cell_type": pd.Categorical.from_codes(codes, categories=cell_types),
            "batch": pd.Categorical(rng.choice(["b1", "b2", "b3"], n_obs), categories=["b3", "b1", "b2"], ordered=True),
            "n_genes": pd.array(np.where(rng.random(n_obs) < 0.1, None, rng.integers(0, 5000, n_obs)), dtype="Int64"),
            "is_doublet": pd.array(np.where(rng.random(n_obs) < 0.1, None, rng.random(n_obs) < 0.5), dtype="boolean"),
            # unique per cell, so anndata keeps them strings rather than making categories
            "barcode": pd.array([None if i == 3 else f"ACGT-{i}" for i in range(n_obs)], dtype="string"),
            "note": np.array([f"note {i}" for i in range(n_obs)], dtype=object),
            "total_counts": rng.gamma(2.0, 1000.0, n_obs),
            "pct_mito": np.where(rng.random(n_obs) < 0.05, np.nan, rng.random(n_obs)).astype(np.float32),
            "passed_qc": rng.random(n_obs) < 0.8,
            "sample": np.char.add("s", rng.integers(0, 7, n_obs).astype(str)).astype(object),
        },
        index=pd.Index([f"cell_{i:07d}" for i in range(n_obs)], name="cell_id"),
    )
    var = pd.DataFrame(
        {"gene_symbol": [f"G{j}" for j in range(n_var)],
         "highly_variable": rng.random(n_var) < 0.3,
         "mean": rng.random(n_var)},
        index=[f"ENSG{j:08d}" for j in range(n_var)],
    )
    dense = rng.random((n_obs, n_var), dtype=np.float32)
    counts = sp.random(n_obs, n_var, density=0.05, format="csr", random_state=7, dtype=np.float32)
    counts.data = np.round(counts.data * 50).astype(np.float32) + 1
    spliced = sp.random(n_obs, n_var, density=0.08, format="csc", random_state=11, dtype=np.float64)
    angle = rng.random(n_obs) * 2 * np.pi
    umap = np.stack([np.cos(angle) * 5 + codes, np.sin(angle) * 5 - codes], axis=1).astype(np.float32)
    return ad.AnnData(
        X=dense, obs=obs, var=var,
        layers={"counts": counts, "spliced": spliced},
        obsm={"X_umap": umap, "X_pca3": rng.standard_normal((n_obs, 3))},
        uns={"params": {"method": "umap", "n_neighbors": 15, "nested": {"seed": 0, "weights": np.arange(4.0)}},
             "title": "pbmc"},
    )


def main() -> None:
    out, n_obs = Path(sys.argv[1]), int(sys.argv[2])
    fmt = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    n_var = int(sys.argv[4]) if len(sys.argv) > 4 else 60
    chunk = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    out.mkdir(parents=True, exist_ok=True)
    adata = build(n_obs, n_var, np.random.default_rng(20241))
    store = out / "adata.zarr"
    if fmt == 2:
        ad.settings.zarr_write_format = 2
    if not chunk:
        adata.write_zarr(store)
    else:  # many small chunks (in shards of four on v3), so a page or block reads a few of them
        kwargs = {"chunks": (chunk,)} if fmt == 2 else {"chunks": (chunk,), "shards": (4 * chunk,)}
        adata.strings_to_categoricals()  # as write_zarr does
        if hasattr(ad.settings, "allow_write_nullable_strings"):
            ad.settings.allow_write_nullable_strings = True
        group = zarr.open_group(store, mode="w", zarr_format=fmt)
        ad.io.write_elem(group, "/", adata)
        ad.io.write_elem(group, "obs", adata.obs, dataset_kwargs=kwargs)
        for name, layer in adata.layers.items():
            if name is not None:
                ad.io.write_elem(group["layers"], name, layer, dataset_kwargs=kwargs)
        for name, emb in adata.obsm.items():
            two_d = {k: (v[0], emb.shape[1]) for k, v in kwargs.items()}
            ad.io.write_elem(group["obsm"], name, emb, dataset_kwargs=two_d)
    back = ad.read_zarr(store)  # the oracle's own reading of what it wrote
    back.obs.to_csv(out / "obs.csv")
    back.var.to_csv(out / "var.csv")
    np.save(out / "X.npy", np.asarray(back.X))
    for name, layer in back.layers.items():
        if name is None:  # anndata 0.13 also names X as the layer None
            continue
        np.save(out / f"layer_{name}.npy", layer.toarray() if sp.issparse(layer) else np.asarray(layer))
    for name, emb in back.obsm.items():
        np.save(out / f"obsm_{name}.npy", np.asarray(emb))
    expected = {
        "anndata": version("anndata"), "zarr": zarr.__version__, "format": fmt,
        "n_obs": back.n_obs, "n_vars": back.n_vars,
        "obs_index_name": back.obs.index.name, "var_index_name": back.var.index.name,
        "obs_columns": list(back.obs.columns), "var_columns": list(back.var.columns),
        "categories": {c: [str(x) for x in back.obs[c].cat.categories]
                       for c in back.obs.columns
                       if isinstance(back.obs[c].dtype, pd.CategoricalDtype) and len(back.obs[c].cat.categories) <= 1000},
        "layers": {name: type(layer).__name__ for name, layer in back.layers.items() if name is not None},
        "uns_method": back.uns["params"]["method"],
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=1))


if __name__ == "__main__":
    main()
