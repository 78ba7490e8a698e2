"""The three sharing steps: push a trained generator, pull it into an augmenter, push the augmented dataset.

    python examples/share_on_hub.py --user YOUR_HF_NAME [--generator FOLDER] [--private]

Needs a write token (`huggingface-cli login` or HF_TOKEN). The dataset card written in step 3 lists the source
data, the augmenter's configuration, the generator's repo id and revision, counts before and after by label and
kind, the skip reasons and the CrossAug citation; `load_dataset(repo)` gives back the rows with their provenance.
"""

from __future__ import annotations

import argparse

from cfaug_hf import CrossAugAugmenter, Generator, TaskSchema
from cfaug_hf.data import load_feverous_sample
from cfaug_hf.methods.crossaug.recipes import default_claim_generator
from hub_cards import push_augmented


def main(argv: list[str] | None = None) -> dict[str, str]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--generator", default=None,
                    help="a saved Generator folder (default: the negative-claim generator shipped in the package)")
    ap.add_argument("--user", required=True, help="your Hub user or organisation name")
    ap.add_argument("--rows", type=int, default=40, help="how many embedded FEVEROUS rows to augment")
    ap.add_argument("--private", action="store_true")
    ap.add_argument("--token", help="defaults to the logged-in token")
    args = ap.parse_args(argv)
    gen_repo, data_repo = f"{args.user}/crossaug-negclaim-generator", f"{args.user}/feverous-crossaug"

    # 1. Push the generator: weights (safetensors), config (JSON) and a model card with its training data.
    generator = Generator.from_pretrained(args.generator) if args.generator else default_claim_generator()
    generator.push_to_hub(gen_repo, private=args.private, token=args.token)

    # 2. Pull it back by repo id into an augmenter; the augmenter remembers the repo id and revision.
    schema = TaskSchema.fact_verification(claim="claim", evidence="evidence", label="label", id_column="id")
    augmenter = CrossAugAugmenter(Generator.from_pretrained(gen_repo, token=args.token), schema)
    source = load_feverous_sample().select(range(args.rows))
    augmented = augmenter.augment(source)

    # 3. Push the augmented dataset with a card that says how it was made.
    push_augmented(augmented, data_repo, augmenter=augmenter, source=source, private=args.private,
                   token=args.token, license="cc-by-sa-3.0")
    print(f"generator: https://huggingface.co/{gen_repo}\ndataset:   https://huggingface.co/datasets/{data_repo}")
    return {"generator": gen_repo, "dataset": data_repo}


if __name__ == "__main__":
    main()
