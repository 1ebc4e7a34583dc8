"""`tvrl-bench annotate`: serve a blind pairwise study of two methods' videos to annotators, or export the votes.

The work is done by tvrl_bench.annotate (pairs, store, session, server); this module parses flags and prints.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

from tvrl_bench.cli.common import add_tracking_uri
from tvrl_bench.cli.errors import USAGE

DEFAULT_STORE = "reports/judgments.sqlite"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "annotate",
        help="serve a blind A/B study page to annotators (votes feed tvrl-report's win-rate table)",
        description=(
            "Serve a local web page where annotators compare the final samples of two methods of a study side by "
            "side, blind (sides randomised, method names never sent to the browser). Prints one personal link per "
            "annotator. Votes are judgments (judge human:<name>) in the judgments file tvrl-report reads; "
            "restarting continues where everyone was. With --export, write the votes to CSV and exit."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--study", required=True, help="study name (= the MLflow experiment name)")
    parser.add_argument("--a", metavar="METHOD", help="method A: a `method` param value (TVRL) or a param filter "
                        "(method=TVRL,credit=frame); verdicts are stored from A's point of view")
    parser.add_argument("--b", metavar="METHOD", help="method B, as --a (e.g. GRPO)")
    parser.add_argument("--labels", nargs=2, default=None, metavar=("A", "B"),
                        help="names stored for A and B in the judgments (default: the method names, or a filter's "
                        "values joined by '/'); tvrl-report's win-rate table matches them")
    parser.add_argument("--prompts", type=int, default=None, metavar="N",
                        help="only the first N prompts of the final samples (default: all)")
    parser.add_argument("--seeds", nargs="+", default=None, metavar="SEED",
                        help="only trials with these seeds (default: every seed both methods have)")
    parser.add_argument("--match", default="policy,sampler,reward",
                        help="params that paired trials of A and B must share besides the seed (comma-separated)")
    parser.add_argument("--annotators", nargs="+", default=None, metavar="N_OR_NAME",
                        help="a number N (annotator1..annotatorN) or names (alice bob); added to the annotators the "
                        "study already has (default: the existing ones, or one annotator1)")
    parser.add_argument("--host", default=None,
                        help="address to listen on (default: 127.0.0.1, this machine only); naming an address that "
                        "other machines reach, e.g. 0.0.0.0, is the only way to serve the network")
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (0: any free port)")
    add_tracking_uri(parser)
    parser.add_argument("--store", default=DEFAULT_STORE,
                        help="SQLite judgments file (the one tvrl-report reads: OUT/judgments.sqlite)")
    parser.add_argument("--export", default=None, metavar="CSV",
                        help="write the study's votes (judges human:*, of --a vs --b when given) to this CSV in the "
                        "format tvrl-report --import-judgments reads, and exit without serving")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tvrl_bench.annotate import AnnotateError

    try:
        if args.export:
            return _export(args)
        return _serve(args)
    except (AnnotateError, ValueError, FileNotFoundError) as exc:  # ReportError is a ValueError
        print(f"tvrl-bench annotate: error: {exc}", file=sys.stderr)
        return USAGE


def _export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tvrl_bench.annotate.pairs import parse_method
    from tvrl_bench.annotate.store import VoteStore
    from tvrl_bench.report.winrate.pairs import method_labels

    if not Path(args.store).is_file():
        raise FileNotFoundError(f"no judgments file at {args.store}; pass --store with the file the votes went to")
    a = method_labels(parse_method(args.a), parse_method(args.a))[0] if args.a else None
    b = method_labels(parse_method(args.b), parse_method(args.b))[0] if args.b else None
    if args.labels:
        a, b = args.labels
    with VoteStore(args.store) as store:
        count = store.export_csv(args.export, args.study, a, b)
    print(f"exported {count} votes of study '{args.study}' to {args.export} "
          f"(import with: tvrl-report --study {args.study} --import-judgments {args.export})")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from tvrl_bench.annotate import AnnotateError
    from tvrl_bench.annotate.pairs import parse_method
    from tvrl_bench.annotate.server import DEFAULT_HOST, bind, serve
    from tvrl_bench.annotate.session import AnnotationSession
    from tvrl_bench.annotate.store import VoteStore
    from tvrl_bench.annotate.annotators import annotator_names

    if not args.a or not args.b:
        raise AnnotateError("serving needs --a and --b (e.g. --a TVRL --b GRPO); only --export works without them")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    host = args.host or DEFAULT_HOST
    bound = bind(host, args.port, allow_remote=args.host is not None)  # before downloading: fail fast
    try:
        match = tuple(p.strip() for p in args.match.split(",") if p.strip())
        names = annotator_names(args.annotators)
        with tempfile.TemporaryDirectory(prefix="tvrl-annotate-") as media, VoteStore(args.store) as store:
            session = AnnotationSession.open(store, args.study, parse_method(args.a), parse_method(args.b), media,
                                             annotators=names, tracking_uri=args.tracking_uri, prompts=args.prompts,
                                             seeds=args.seeds, match=match,
                                             labels=tuple(args.labels) if args.labels else None)
            try:  # a stop signal right after the links (a script waiting for "serving on") stops it the same way
                _print_links(session, bound, args.store)
                serve(session, bound)
            except KeyboardInterrupt:
                pass
    finally:
        bound.sock.close()
    print("stopped; votes are in " + args.store, flush=True)
    return 0


def _print_links(session: Any, bound: Any, store: str) -> None:
    """What the study holds, one link per annotator with their progress, and where the server listens."""
    from tvrl_bench.annotate.server import is_loopback
    from tvrl_bench.annotate.annotators import judge_name, link

    total = len(session.pairs)
    prompts = len({p.prompt for p in session.pairs})
    seeds = len({p.seed for p in session.pairs})
    print(f"blind study '{session.study}': {session.method_a} vs {session.method_b}, {total} pairs "
          f"({prompts} prompts x {seeds} seeds); votes go to {store}")
    print("annotator links (one per person; a link is its owner's key, share it with them only):")
    width = max(len(judge_name(n)) for n in session.annotators())
    for name, token in session.annotators().items():
        done = session.state(name)["done"]
        print(f"  {judge_name(name):<{width}}  {link(bound.base_url, token)}  ({done}/{total} done)")
    if not is_loopback(bound.host):
        print(f"warning: listening on {bound.host}: anyone on the network who has a link can vote with it")
    print(f"serving on {bound.base_url} (Ctrl-C to stop; every vote is saved when it is cast)", flush=True)
