"""ICDA trained as the reference trains it: the selector's gate and positions, the evaluation-path invariant, early
stopping with degeneracy checks, and the N/4 training-set rule."""

import json

import pytest
import torch
from torch import nn

from cfaug_hf import RationaleSelector
from cfaug_hf.components.rationale import SentenceRationaleConfig, SentenceRationaleModel
from cfaug_hf.methods.icda import CounterfactualEpochDataset, SelectionResult
from cfaug_hf.methods.icda.training import SelectorCheckpointCallback, keep_for_training, train_selector
from cfaug_hf.testing import tiny_encoder

from test_icda import reviews, tiny_selector


# ------------------------------------------------------------------------------------------------- the model
def test_cached_vectors_and_raw_documents_select_the_same_and_never_padding():
    selector = tiny_selector(freeze_encoder=True)
    docs, labels, _ = reviews(16)
    docs = [d[:1 + i % 4] for i, d in enumerate(docs)]  # 1 to 4 sentences: every batch has padding sentences
    ds = CounterfactualEpochDataset(docs, labels, size=0)
    selector.embed_table(ds.table)
    raw = selector.select(docs, labels)
    cached = selector.select(ds.docs, labels, table=ds.table)
    assert raw.selected == cached.selected and raw.predicted == cached.predicted
    assert raw.error == pytest.approx(cached.error, abs=1e-5)
    assert all(s < len(d) for sel, d in zip(raw.selected, docs) for s in sel)
    # k larger than a document: its rationale is its real sentences only
    selector.model.config.k = 2
    two = selector.select(docs, labels)
    assert all(len(sel) == min(2, len(d)) and max(sel) < len(d) for sel, d in zip(two.selected, docs))


def test_all_padding_sentences_embed_to_finite_zeros():
    model = SentenceRationaleModel.from_encoder(tiny_encoder()[0], sentence_layers=1, sentence_heads=2)
    ids = torch.tensor([[5, 6, 7], [0, 0, 0]])
    mask = torch.tensor([[1, 1, 1], [0, 0, 0]])
    for pooling in ("mean", "cls"):
        model.config.pooling = pooling
        out = model.embed_sentences(ids, mask)
        assert torch.isfinite(out).all() and torch.count_nonzero(out[1]) == 0


def test_two_way_gate_pools_the_selected_sentence_against_zero():
    torch.manual_seed(0)
    model = SentenceRationaleModel.from_encoder(tiny_encoder()[0], sentence_layers=1, sentence_heads=2).eval()
    emb = torch.randn(3, 4, model.config.encoder["hidden_size"])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
    out = model(sentence_embeddings=emb, sentence_mask=mask)
    assert all(mask[i, out.selected[i, 0]] for i in range(3))
    chosen = emb[torch.arange(3), out.selected[:, 0]]
    # unselected sentences tie at zero; padding takes no part (the one-sentence document pools unclamped)
    expected = torch.where(mask.sum(1, keepdim=True) > 1, chosen.clamp(min=0), chosen)
    assert torch.allclose(model.classifier(expected), out.logits, atol=1e-6)
    # the gradient reaches the select/not logits of unselected sentences (the reference's per-sentence signal)
    model.train()
    logits = {}

    def keep(module, inputs, output):
        output.retain_grad()
        logits["z"] = output

    model.selector.register_forward_hook(keep)
    out = model(sentence_embeddings=emb, sentence_mask=mask, labels=torch.tensor([0, 1, 0]))
    out.loss.backward()
    grad = logits["z"].grad.abs().sum(-1)
    # every unselected real sentence ties at zero in the max-pool and shares the gradient (not only the first)
    assert all(grad[0, i] > 0 for i in range(4) if i != out.selected[0, 0])
    assert all(grad[1, i] > 0 for i in range(2) if i != out.selected[1, 0])


def test_a_saturated_two_way_gate_still_ranks_sentences_by_what_it_learned():
    # Training drives every select probability towards 1; once they all round to 1.0 in float32 the choice must
    # still follow the selector's logits, not fall to an index tie-break that every selector shares.
    torch.manual_seed(0)
    model = SentenceRationaleModel.from_encoder(tiny_encoder()[0], sentence_layers=1, sentence_heads=2).eval()
    emb = torch.randn(8, 6, model.config.encoder["hidden_size"])
    before = model(sentence_embeddings=emb).selected
    with torch.no_grad():
        model.selector.bias += torch.tensor([0.0, 60.0])
    out = model(sentence_embeddings=emb)
    assert torch.softmax(model.selector(model.sentence_encoder(emb)), -1)[..., 1].eq(1.0).all()
    assert torch.equal(out.selected, before)
    assert len(set(before[:, 0].tolist())) > 1


def test_sentence_positions_make_order_matter():
    torch.manual_seed(0)
    emb = torch.randn(1, 3, tiny_encoder()[0].config.hidden_size)
    flipped = emb.flip(1)
    scores = {}
    for positions in ("sinusoidal", "none"):
        torch.manual_seed(1)
        model = SentenceRationaleModel.from_encoder(tiny_encoder()[0], sentence_layers=1, sentence_heads=2,
                                                    positions=positions).eval()
        a = model(sentence_embeddings=emb).scores
        b = model(sentence_embeddings=flipped).scores.flip(1)
        scores[positions] = torch.allclose(a, b, atol=1e-5)
    assert scores == {"sinusoidal": False, "none": True}


def test_selectors_saved_before_the_gate_option_load_with_their_old_behaviour(tmp_path):
    selector = tiny_selector(gate="softmax", positions="none", classifier_dropout=0.1)
    path = selector.save_pretrained(tmp_path / "old")
    config = json.loads((path / "config.json").read_text())
    for key in ("gate", "positions", "pooling"):
        config.pop(key)
    (path / "config.json").write_text(json.dumps(config))
    back = RationaleSelector.from_pretrained(path)
    assert (back.model.config.gate, back.model.config.positions) == ("softmax", "none")
    docs, labels, _ = reviews(6)
    assert back.select(docs, labels).selected == selector.select(docs, labels).selected
    with pytest.raises(ValueError, match="gate must be one of"):
        SentenceRationaleConfig(gate="sigmoid")


# -------------------------------------------------------------------------------- early stopping and checkpoints
class ScriptedSelector:
    """Plays back (dev loss, degenerate) per evaluation; its 'weights' record which evaluation they came from."""

    def __init__(self, script):
        self.script = list(script)
        self.model = nn.Linear(1, 1, bias=False)
        self.calls = 0

    def select(self, documents, labels, table=None):
        loss, degenerate = self.script[self.calls]
        with torch.no_grad():
            self.model.weight.fill_(self.calls)
        self.calls += 1
        p = float(torch.exp(torch.tensor(-loss)))
        # degenerate: class 0 always picks sentence 0, class 1 sentence 1
        selected = [[y if degenerate else 0] for y in labels]
        return SelectionResult(selected, list(labels), [1 - p] * len(labels))


def test_checkpoint_only_when_loss_falls_and_selections_are_not_degenerate():
    docs, labels, _ = reviews(40)  # 20 a class: enough for a degenerate split to stand out from chance
    dev = CounterfactualEpochDataset(docs, labels, size=0)
    #              start      e0: better  e1: better but degenerate  e2: worse  e3: worse  e4: never reached
    script = [(0.70, True), (0.60, False), (0.40, True), (0.65, False), (0.62, False), (0.1, False)]
    selector = ScriptedSelector(script)
    callback = SelectorCheckpointCallback(selector, dev, patience=3)
    assert callback.evaluate(-1)["checkpoint"]  # the start is always kept, even degenerate

    class State:
        epoch = 0

    class Control:
        should_training_stop = False

    control = Control()
    for epoch in range(5):
        State.epoch = epoch + 1
        callback.on_epoch_end(None, State, control)
        if control.should_training_stop:
            break
    assert [h["checkpoint"] for h in callback.history] == [True, True, False, False, False]
    assert control.should_training_stop and callback.best_epoch == 0  # 3 epochs without a checkpoint
    assert callback.history[2]["degenerate"]
    callback.restore()
    assert selector.model.weight.item() == 1  # the weights of evaluation 1 (epoch 0)


def test_train_selector_converges_and_keeps_the_best_epoch(tmp_path):
    docs, labels, _ = reviews(32)
    dev_docs, dev_labels, _ = reviews(16, seed=1)
    selector = tiny_selector(freeze_encoder=True)
    train = CounterfactualEpochDataset(docs, labels, size=0)
    dev = CounterfactualEpochDataset(dev_docs, dev_labels, table=train.table, size=0)
    selector.embed_table(train.table)
    fit = train_selector(selector, train, dev, max_epochs=30, patience=2, learning_rate=3e-3, batch_size=8,
                         samples_per_step=16, output_dir=tmp_path, training_args={"use_cpu": True})
    assert fit.epochs_run < 30 or fit.best_epoch >= 25  # early stopping ends a run that stopped improving
    assert fit.best_loss <= fit.initial_loss
    best = [h for h in fit.history if h["checkpoint"]][-1]
    assert best["epoch"] == fit.best_epoch and not (fit.best_epoch >= 0 and best["degenerate"])
    # the selector holds the best checkpoint's weights
    from cfaug_hf.methods.icda.training import dev_selection

    items, result = dev_selection(selector, dev)
    import math
    loss = sum(-math.log(max(1 - e, 1e-12)) for e in result.error) / len(items)
    assert loss == pytest.approx(fit.best_loss, abs=1e-5)


# ------------------------------------------------------------------------------------------ the N/4 rule
def test_training_set_keeps_correct_low_error_multi_sentence_documents_balanced_and_capped():
    n = 16
    labels = [i % 2 for i in range(n)]
    predicted = list(labels)
    predicted[0] = 1  # misclassified
    num_sentences = [3] * n
    num_sentences[2] = 1  # cannot be swapped
    error = [i / 100 for i in range(n)][::-1]  # later documents are more confident
    result = SelectionResult([[0]] * n, predicted, error)
    kept = keep_for_training(result, labels, num_sentences)
    assert len(kept) == 2 * (n // 4)  # N/4 per class
    assert 0 not in kept and 2 not in kept
    assert kept[:4] == [14, 12, 10, 8] and kept[4:] == [15, 13, 11, 9]  # lowest error first
    # the smallest class bounds every class
    labels2 = [0] * 12 + [1] * 4
    kept2 = keep_for_training(SelectionResult([[0]] * 16, labels2, [0.1] * 16), labels2, [3] * 16, cap_factor=2)
    assert sorted(labels2[d] for d in kept2) == [0] * 4 + [1] * 4
    with pytest.raises(ValueError, match="needs prediction errors"):
        keep_for_training(SelectionResult([[0]], [0]), [0], [2])
