"""Models for `python -m dtr.compare` (docs/comparison.md), each a function
returning (model, optimizer, make_batch, loss_fn[, blocks]) as its users
train it. CPU-sized: a run takes seconds to minutes on 2 cores.

    cd bench/torch && PYTHONPATH=../../python \\
        ../../.venv/bin/python -m dtr.compare compare_models:gpt2 --out OUT
"""
import torch
from torch import nn


def _tokens(steps, batch, length, vocab):
    gen = torch.Generator().manual_seed(1)
    return [torch.randint(0, vocab, (batch, length), generator=gen)
            for _ in range(steps)]


def _adamw(model):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                              {"params": rest, "weight_decay": 0.0}],
                             lr=1e-4)


def gpt2():
    """GPT-2 (transformers, from a config: 4 layers of width 256, 8 heads)
    on 8 sequences of 256 tokens; its blocks are the decoder layers."""
    from transformers import GPT2Config, GPT2LMHeadModel
    # No KV cache in training (as gradient_checkpointing_enable() sets):
    # a recomputed block would append to it again.
    model = GPT2LMHeadModel(GPT2Config(vocab_size=2048, n_positions=256,
                                       n_embd=256, n_layer=4, n_head=8,
                                       use_cache=False))
    data = _tokens(8, 8, 256, 2048)
    return (model, _adamw(model), lambda step: data[step % len(data)],
            lambda m, ids: m(input_ids=ids, labels=ids).loss,
            list(model.transformer.h))


def bert():
    """BERT for sequence classification (4 layers of width 256) on 8
    sequences of 256 tokens; its blocks are the encoder layers."""
    from transformers import BertConfig, BertForSequenceClassification
    model = BertForSequenceClassification(BertConfig(
        vocab_size=2048, hidden_size=256, num_hidden_layers=4,
        num_attention_heads=8, intermediate_size=1024,
        max_position_embeddings=256, num_labels=4))
    ids = _tokens(8, 8, 256, 2048)
    gen = torch.Generator().manual_seed(2)
    labels = [torch.randint(0, 4, (8,), generator=gen) for _ in ids]
    return (model, _adamw(model),
            lambda step: (ids[step % 8], labels[step % 8]),
            lambda m, b: m(input_ids=b[0], labels=b[1]).loss,
            list(model.bert.encoder.layer))


class _Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


def mlp():
    """A residual MLP (8 blocks of width 512, LayerNorm, GELU) with AdamW
    on batches of 1024: activations outweigh parameters."""
    model = nn.Sequential(*[_Block(512) for _ in range(8)],
                          nn.Linear(512, 10))
    gen = torch.Generator().manual_seed(1)
    data = [(torch.randn(1024, 512, generator=gen),
             torch.randint(0, 10, (1024,), generator=gen)) for _ in range(4)]
    return (model, _adamw(model), lambda step: data[step % len(data)],
            lambda m, b: nn.functional.cross_entropy(m(b[0]), b[1]))
