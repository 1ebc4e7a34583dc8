"""A fresh MLflow SQLite store per test, copied from one store created per session (creating the tables takes
seconds; copying the file takes none)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

TEMPLATE = "mlflow_template.db"


def fresh_store(tmp_path_factory, folder: Path) -> str:
    """The URI of a new, empty MLflow database `<folder>/m.db` (experiments made by tvrl-bench keep their artifacts
    beside it, in `<folder>/m_artifacts`; MLflow's own Default experiment points at the working directory)."""
    from mlflow.tracking import MlflowClient

    template = tmp_path_factory.getbasetemp() / TEMPLATE
    if not template.exists():
        building = template.with_suffix(".building")
        building.mkdir(exist_ok=True)
        before = os.getcwd()
        os.chdir(building)  # the default experiment's artifact root points here, never into the checkout
        try:
            MlflowClient(f"sqlite:///{building / 'm.db'}").search_experiments()
        finally:
            os.chdir(before)
        shutil.copyfile(building / "m.db", template)
    target = Path(folder) / "m.db"
    shutil.copyfile(template, target)
    return f"sqlite:///{target}"
