"""Hugging Face transformers models in the zoo: built from small configs
(random weights, no download) and trained as their users train them --
AdamW with weight decay, a linear warm-up schedule, gradient clipping,
inputs passed as keyword arguments in a dict (a tokenizer's output).
Attention runs through F.scaled_dot_product_attention (transformers'
default "sdpa" implementation)."""
import torch

import dtr
from zoo.cases import Case, Trainer


def _warmup(o):
    from transformers import get_linear_schedule_with_warmup
    return get_linear_schedule_with_warmup(o, num_warmup_steps=2,
                                           num_training_steps=10)


def _tokens(n, batch, length, vocab, seed=17):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randint(0, vocab, (batch, length), generator=gen)
            for _ in range(n)]


def _lm_case(name, build, vocab=128, batch=4, length=16, labels="ids",
             steps=3):
    """A language model trained on {input_ids, attention_mask, labels}."""
    def setup(use_dtr):
        model = build()
        if use_dtr:
            dtr.checkpoint(model)
        gen = torch.Generator().manual_seed(3)
        data = []
        for ids in _tokens(steps, batch, length, vocab):
            mask = torch.ones_like(ids)
            mask[0, -3:] = 0  # one padded sequence
            batch_in = {"input_ids": ids, "attention_mask": mask}
            if labels == "ids":
                batch_in["labels"] = ids
            elif labels == "class":
                batch_in["labels"] = torch.randint(0, 3, (batch,),
                                                   generator=gen)
            else:  # seq2seq: decoder labels of another length
                batch_in["labels"] = torch.randint(0, vocab, (batch, 8),
                                                   generator=gen)
            data.append((batch_in, None))
        decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
        rest = [p for n, p in model.named_parameters() if p.dim() < 2]
        o = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                               {"params": rest, "weight_decay": 0.0}],
                              lr=1e-3)
        return Trainer(model, o, data, sched=_warmup(o), clip=1.0,
                       forward=lambda inputs: model(**inputs),
                       loss_fn=lambda out, _: out.loss, habits=("item",))
    return Case(name, setup, steps=steps, requires="transformers",
                habits="transformers, AdamW wd groups, warm-up, clip, kwargs")


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    return GPT2LMHeadModel(GPT2Config(vocab_size=128, n_positions=32,
                                      n_embd=64, n_layer=2, n_head=4))


def _bert():
    from transformers import BertConfig, BertForSequenceClassification
    return BertForSequenceClassification(BertConfig(
        vocab_size=128, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=128,
        max_position_embeddings=32, num_labels=3))


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    return LlamaForCausalLM(LlamaConfig(
        vocab_size=128, hidden_size=64, intermediate_size=128,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=32))


def _t5():
    from transformers import T5Config, T5ForConditionalGeneration
    return T5ForConditionalGeneration(T5Config(
        vocab_size=128, d_model=64, d_kv=16, d_ff=128, num_layers=2,
        num_heads=4, decoder_start_token_id=0))


def _vit_case(name, build, size, batch=4, steps=3):
    def setup(use_dtr):
        model = build()
        if use_dtr:
            dtr.checkpoint(model)
        gen = torch.Generator().manual_seed(5)
        data = [({"pixel_values": torch.randn(batch, 3, size, size,
                                              generator=gen),
                  "labels": torch.randint(0, 10, (batch,), generator=gen)},
                 None) for _ in range(steps)]
        o = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
        return Trainer(model, o, data, sched=_warmup(o), clip=1.0,
                       forward=lambda inputs: model(**inputs),
                       loss_fn=lambda out, _: out.loss)
    return Case(name, setup, steps=steps, requires="transformers",
                habits="transformers vision, AdamW, warm-up, clip, kwargs")


def _vit():
    from transformers import ViTConfig, ViTForImageClassification
    return ViTForImageClassification(ViTConfig(
        image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=128, num_labels=10))


def _convnext():
    from transformers import ConvNextConfig, ConvNextForImageClassification
    return ConvNextForImageClassification(ConvNextConfig(
        hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 2, 1], num_labels=10))


def _resnet():
    from transformers import ResNetConfig, ResNetForImageClassification
    return ResNetForImageClassification(ResNetConfig(
        embedding_size=16, hidden_sizes=[32, 64, 128, 256], depths=[2, 2, 3, 2],
        layer_type="bottleneck", num_labels=10))


CASES = [
    _lm_case("hf_gpt2", _gpt2),
    _lm_case("hf_bert", _bert, labels="class"),
    _lm_case("hf_llama", _llama),
    _lm_case("hf_t5", _t5, labels="seq2seq"),
    _vit_case("hf_vit", _vit, 32),
    _vit_case("hf_convnext", _convnext, 64),
    _vit_case("hf_resnet", _resnet, 32, batch=8),
]
