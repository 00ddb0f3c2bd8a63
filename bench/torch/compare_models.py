"""Models for `python -m dtr.compare` (docs/comparison.md), each a function
returning (model, optimizer, make_batch, loss_fn[, blocks]) as its users
train it: GPT-2, BERT, ViT and ResNet-50 from transformers' configs, a
residual MLP, an LSTM language model, and two dynamic ones (a TreeLSTM on
a new tree every step, a transformer on a new length every step).
CPU-sized: a run takes seconds to minutes on 2 cores.

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


def vit():
    """ViT for image classification (transformers: 4 layers of width 192,
    patches of 8 on 64x64 images) on batches of 16; blocks: its layers."""
    from transformers import ViTConfig, ViTForImageClassification
    model = ViTForImageClassification(ViTConfig(
        image_size=64, patch_size=8, hidden_size=192, num_hidden_layers=4,
        num_attention_heads=3, intermediate_size=768, num_labels=10))
    gen = torch.Generator().manual_seed(1)
    data = [(torch.randn(16, 3, 64, 64, generator=gen),
             torch.randint(0, 10, (16,), generator=gen)) for _ in range(4)]
    return (model, _adamw(model), lambda step: data[step % 4],
            lambda m, b: m(pixel_values=b[0], labels=b[1]).loss,
            list(model.vit.encoder.layer))


def resnet50():
    """ResNet-50 (transformers' ResNet: bottleneck stages 3-4-6-3) on 8
    images of 96x96, SGD with momentum; blocks: its stages."""
    from transformers import ResNetConfig, ResNetForImageClassification
    model = ResNetForImageClassification(ResNetConfig(
        depths=[3, 4, 6, 3], layer_type="bottleneck", num_labels=10))
    gen = torch.Generator().manual_seed(1)
    data = [(torch.randn(8, 3, 96, 96, generator=gen),
             torch.randint(0, 10, (8,), generator=gen)) for _ in range(4)]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9,
                                weight_decay=1e-4)
    return (model, optimizer, lambda step: data[step % 4],
            lambda m, b: m(pixel_values=b[0], labels=b[1]).loss,
            list(model.resnet.encoder.stages))


class _LanguageModel(nn.Module):
    def __init__(self, vocab, width, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, width, num_layers=layers,
                            batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(self.lstm(self.embed(ids))[0])


def lstm_lm():
    """A 2-layer LSTM language model (width 256) on 16 sequences of 128
    tokens, next-token loss, Adam and gradient clipping."""
    model = _LanguageModel(1024, 256, 2)
    data = _tokens(4, 16, 129, 1024)

    def loss_fn(m, ids):
        logits = m(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 1024),
                                           ids[:, 1:].reshape(-1))
        return loss

    return (model, torch.optim.Adam(model.parameters(), lr=1e-3),
            lambda step: data[step % 4], loss_fn)


class _TreeLSTM(nn.Module):
    """Child-sum TreeLSTM over binary trees: one cell call per node, so
    the graph follows each tree's shape."""

    def __init__(self, width):
        super().__init__()
        self.width = width
        self.leaf = nn.Linear(width, 3 * width)
        self.gates = nn.Linear(2 * width, 5 * width)
        self.head = nn.Linear(width, 2)

    def node(self, tree, leaves):
        if isinstance(tree, int):
            i, o, u = self.leaf(leaves[tree]).chunk(3, -1)
            c = torch.sigmoid(i) * torch.tanh(u)
            return torch.sigmoid(o) * torch.tanh(c), c
        (hl, cl), (hr, cr) = (self.node(t, leaves) for t in tree)
        i, o, u, fl, fr = self.gates(torch.cat([hl, hr], -1)).chunk(5, -1)
        c = (torch.sigmoid(i) * torch.tanh(u) + torch.sigmoid(fl) * cl
             + torch.sigmoid(fr) * cr)
        return torch.sigmoid(o) * torch.tanh(c), c

    def forward(self, tree, leaves):
        return self.head(self.node(tree, leaves)[0])


def _random_tree(gen, lo, hi):
    if hi - lo == 1:
        return lo
    split = int(torch.randint(lo + 1, hi, (1,), generator=gen))
    return (_random_tree(gen, lo, split), _random_tree(gen, split, hi))


def treelstm():
    """A TreeLSTM (width 256, batch of 64 per node) over a new random
    binary tree of 48 to 96 leaves every step: a dynamic graph."""
    model = _TreeLSTM(256)
    gen = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(8):
        n = int(torch.randint(48, 97, (1,), generator=gen))
        batches.append((_random_tree(gen, 0, n),
                        torch.randn(n, 64, 256, generator=gen),
                        torch.randint(0, 2, (64,), generator=gen)))
    return (model, torch.optim.Adam(model.parameters(), lr=1e-3),
            lambda step: batches[step % 8],
            lambda m, b: nn.functional.cross_entropy(m(b[0], b[1]), b[2]))


def varlen_transformer():
    """nn.TransformerEncoder (4 layers of width 256) fed batches of 16
    sequences whose length changes every step (64 to 256 tokens): a new
    shape each step; blocks: its layers."""
    layer = nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.1,
                                       batch_first=True)
    encoder = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
    model = nn.Sequential(nn.Embedding(1024, 256), encoder,
                          nn.Linear(256, 1024))
    gen = torch.Generator().manual_seed(1)
    lengths = [64, 192, 128, 256, 96, 160, 224, 80]
    data = [torch.randint(0, 1024, (16, n + 1), generator=gen)
            for n in lengths]

    def loss_fn(m, ids):
        logits = m(ids[:, :-1])
        return nn.functional.cross_entropy(logits.reshape(-1, 1024),
                                           ids[:, 1:].reshape(-1))

    return (model, _adamw(model), lambda step: data[step % 8], loss_fn,
            list(encoder.layers))
