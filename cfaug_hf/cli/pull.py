"""``cfaug pull``: download a Hub repository into a folder."""

from __future__ import annotations

import argparse

from .base import Command, add_token_option


class PullCommand(Command):
    name = "pull"
    summary = "Download a repository into a folder (it appears only when complete)."
    description = ("Download a Hub repository into FOLDER. FOLDER must be new, empty, or an earlier pull or save of "
                   "the same kind of object (it is then updated; files you added are kept). A non-empty folder "
                   "holding anything else is refused unless --overwrite; no file of yours is ever deleted.")

    def add_arguments(self, parser: argparse.ArgumentParser, argv: list[str]) -> None:
        parser.add_argument("repo_id", help="namespace/name on the Hub")
        parser.add_argument("folder", help="where to put the files")
        parser.add_argument("--repo-type", choices=["model", "dataset"], default="model",
                            help="model (components, augmenters) or dataset (augmented data); default model")
        parser.add_argument("--revision", default=None, help="branch, tag or commit (default main)")
        add_token_option(parser)
        parser.add_argument("--overwrite", action="store_true",
                            help="write into a non-empty folder of another kind (same-named files are replaced)")

    def run(self, args: argparse.Namespace) -> None:
        from ..sharing import pull

        path = pull(args.repo_id, args.folder, repo_type=args.repo_type, revision=args.revision, token=args.token,
                    overwrite=args.overwrite)
        print(f"Downloaded {args.repo_type} {args.repo_id} to {path}.")
