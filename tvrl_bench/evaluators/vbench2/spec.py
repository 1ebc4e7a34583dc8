"""VBench-2.0's own definitions: its 18 dimensions, their 5 categories, samples per prompt and file naming.

Sources (Vchitect/VBench, folder VBench-2.0):
- dimension names: `vbench2/__init__.py` (`VBench2.build_full_dimension_list`) and `evaluate.sh`;
- categories: `scripts/constant.py` (CREATIVITY_LIST, COMMONSENSE_LIST, CONTROLLABILITY_LIST, HUMAN_FIDELITY_LIST,
  PHYSICS_LIST; every DIM_WEIGHT is 1 and every NORMALIZE_DIC range is [0, 1]), combined by
  `scripts/cal_final_score.py`: a category is the plain mean of its dimensions, the total the plain mean of the
  five categories;
- samples and names: `sampled_videos/README.md` and `VBench2.build_full_info_json`: 3 videos per prompt (20 for
  Diversity) named `<prompt[:180]>-<index>.mp4`, one folder per dimension since prompts recur across dimensions;
- per-prompt records: `vbench2/diversity.py` scores a prompt's whole group of videos (its record carries the
  group's first video path); every other dimension scores each video. A per-video score of -1 marks a video
  the dimension could not judge (its own mean leaves it out).
"""

from __future__ import annotations

# VBench-2.0's dimension names, as its evaluate.py takes them and its results JSON keys them.
DIMENSIONS: tuple[str, ...] = (
    "Human_Anatomy",
    "Human_Identity",
    "Human_Clothes",
    "Diversity",
    "Composition",
    "Dynamic_Spatial_Relationship",
    "Dynamic_Attribute",
    "Motion_Order_Understanding",
    "Human_Interaction",
    "Complex_Landscape",
    "Complex_Plot",
    "Camera_Motion",
    "Motion_Rationality",
    "Instance_Preservation",
    "Mechanics",
    "Thermotics",
    "Material",
    "Multi-View_Consistency",
)

# category metric name -> its dimensions (scripts/constant.py).
CATEGORIES: dict[str, tuple[str, ...]] = {
    "creativity": ("Composition", "Diversity"),
    "commonsense": ("Instance_Preservation", "Motion_Rationality"),
    "controllability": (
        "Camera_Motion",
        "Complex_Landscape",
        "Complex_Plot",
        "Dynamic_Attribute",
        "Dynamic_Spatial_Relationship",
        "Human_Interaction",
        "Motion_Order_Understanding",
    ),
    "human_fidelity": ("Human_Anatomy", "Human_Clothes", "Human_Identity"),
    "physics": ("Material", "Mechanics", "Multi-View_Consistency", "Thermotics"),
}

# Dimensions whose per-video results hold one record per prompt (the group of its samples), not per video.
PER_PROMPT_DIMENSIONS: frozenset[str] = frozenset({"Diversity"})

NAME_LIMIT = 180  # characters of the prompt used in a video's file name
SAMPLES_PER_PROMPT = 3
DIVERSITY_SAMPLES = 20
INVALID_SCORE = -1  # a per-video result the dimension could not judge

MISSING_POLICIES = ("error", "zero", "partial")


def samples_needed(dimension: str) -> int:
    """How many videos VBench-2.0 reads for each prompt of `dimension`: 20 for Diversity, else 3."""
    return DIVERSITY_SAMPLES if dimension == "Diversity" else SAMPLES_PER_PROMPT


def video_name(prompt: str, index: int, suffix: str = ".mp4") -> str:
    """VBench-2.0's file name of sample `index` of `prompt`: `<prompt[:180]>-<index>.mp4`."""
    return f"{prompt[:NAME_LIMIT]}-{index}{suffix}"


def metric_key(dimension: str) -> str:
    """The metric key of a dimension, `dim/<dimension_with_underscores>`: Multi-View_Consistency -> dim/multi_view_consistency."""
    return "dim/" + dimension.lower().replace("-", "_")


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


_BY_NORMAL = {_normal(d): d for d in DIMENSIONS}


def canonical_dimension(name: str) -> str | None:
    """VBench-2.0's spelling of a dimension written with spaces, underscores, hyphens or any case; None if unknown.

    ("Multi-View Consistency", "multi_view_consistency" -> "Multi-View_Consistency".)
    """
    return _BY_NORMAL.get(_normal(name))


def category_of(dimension: str) -> str:
    for category, members in CATEGORIES.items():
        if dimension in members:
            return category
    raise KeyError(dimension)


def checked_dimension(name: str) -> str:
    """The canonical name of a dimension a user named (`canonical_dimension`); ValueError naming the known ones."""
    dimension = canonical_dimension(str(name))
    if dimension is None:
        raise ValueError(f"evaluators.vbench2.dimensions: unknown dimension '{name}' (known: {', '.join(DIMENSIONS)})")
    return dimension
