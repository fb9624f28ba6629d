#!/usr/bin/env python3
"""Writes tiny Hugging Face decoders exported by today's exporter, and
PyTorch's training steps on them.

For each family, a tiny config of the public `transformers` (5.x) class with
random weights, exported by torch 2.x's default exporter
(`torch.onnx.export(..., dynamo=True)`) as a user would, in a flavour:
  names     optimize=False and eager attention: parameter names kept
  defaults  every default: optimize=True (Linear weights folded into
            transposed val_N initializers, ties broken) and sdpa attention
  opset23   as defaults, at opset 23: attention is ONNX's Attention op and
            the norms RMSNormalization
and either with dynamic batch and sequence dimensions (flavour
"<flavour>_dynamic": dynamic_shapes with Dim.DYNAMIC), which dtc binds from
the batch files (dtc-compile --bind-inputs BATCH_DIR).
and three AdamW steps of PyTorch autograd on one fixed batch, recorded as
dtc-run --dump writes them, by the parameters' state-dict names that the
export uses (a tied embedding and head are one initializer, named after one
of its state-dict keys):
  <family>-<flavour>/model.onnx      the graph exactly as the exporter wrote it
  <family>-<flavour>/batch/{ids,labels}.npy
  <family>-<flavour>/initial/<param>.npy
  <family>-<flavour>/adamw/          loss.npy, grad/ (last step), param/ (after)

Run from a pinned venv outside the repository (a few GB; only the CPU is
used):
  python3 -m venv /work/venv-t2 && /work/venv-t2/bin/pip install \\
      torch==2.9.1 transformers==5.24.0 onnx==1.23.2 onnxscript
  /work/venv-t2/bin/python make_hf5_models.py [flavour/family...]
The outputs are committed, so the tests download nothing.
"""
import os
import sys
import warnings

import onnx
import torch
import transformers

# The model wrapper, batch and PyTorch training record of the torch 1.13
# fixtures (same shapes, same steps).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hf"))
from make_hf_models import VOCAB, Logits, make_batch, perturb_norms, record_training  # noqa: E402


def families():
    t = transformers
    tiny = dict(vocab_size=VOCAB)
    decoder = dict(tiny, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                   intermediate_size=64, max_position_embeddings=32)
    return {
        "llama": (t.LlamaConfig, t.LlamaForCausalLM, dict(decoder, num_key_value_heads=2)),
        # Llama 3.2's layout: the head tied to the embedding.
        "llama_tied": (t.LlamaConfig, t.LlamaForCausalLM, dict(
            decoder, num_key_value_heads=2, tie_word_embeddings=True)),
        "qwen2": (t.Qwen2Config, t.Qwen2ForCausalLM, dict(decoder, num_key_value_heads=2)),
        "gpt2": (t.GPT2Config, t.GPT2LMHeadModel, dict(
            tiny, n_embd=32, n_layer=2, n_head=4, n_positions=32, resid_pdrop=0.0,
            embd_pdrop=0.0, attn_pdrop=0.0)),
        "gemma": (t.GemmaConfig, t.GemmaForCausalLM, dict(decoder, num_key_value_heads=2,
                                                          head_dim=8)),
        "mistral": (t.MistralConfig, t.MistralForCausalLM, dict(decoder, num_key_value_heads=2)),
        "phi3": (t.Phi3Config, t.Phi3ForCausalLM, dict(decoder, num_key_value_heads=2,
                                                       pad_token_id=0)),
        "gpt_neox": (t.GPTNeoXConfig, t.GPTNeoXForCausalLM, dict(
            decoder, rotary_pct=0.5, hidden_dropout=0.0, attention_dropout=0.0)),
        "falcon": (t.FalconConfig, t.FalconForCausalLM, dict(
            tiny, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            new_decoder_architecture=False, multi_query=True, parallel_attn=True, bias=False,
            hidden_dropout=0.0, attention_dropout=0.0)),
        "bloom": (t.BloomConfig, t.BloomForCausalLM, dict(
            tiny, hidden_size=32, n_layer=2, n_head=4, hidden_dropout=0.0,
            attention_dropout=0.0)),
        "stablelm": (t.StableLmConfig, t.StableLmForCausalLM, dict(
            decoder, num_key_value_heads=2, partial_rotary_factor=0.5)),
        "olmo": (t.OlmoConfig, t.OlmoForCausalLM, dict(decoder, num_key_value_heads=2)),
        "opt": (t.OPTConfig, t.OPTForCausalLM, dict(
            tiny, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64,
            max_position_embeddings=32, word_embed_proj_dim=32, dropout=0.0,
            attention_dropout=0.0, activation_dropout=0.0, layerdrop=0.0)),
    }


def exported_names(model, path):
    """Each parameter's state-dict name in the export, by the parameter: of a
    tied parameter's names, the one the graph's initializer has."""
    initializers = {init.name for init in onnx.load(path).graph.initializer}
    names = {}
    for name, param in model.named_parameters(remove_duplicate=False):
        if name in initializers or id(param) not in names:
            names[id(param)] = name
    return names


def make(family, flavour, config_class, model_class, options):
    torch.manual_seed(0)
    config = config_class(**options)
    names_kept = flavour.startswith("names")
    attention = "eager" if names_kept else "sdpa"
    model = Logits(model_class._from_config(config, attn_implementation=attention))
    perturb_norms(model)
    ids, labels = make_batch()
    flavour = flavour.replace("defaults_folded", "defaults")
    out = f"{family}-{flavour}"
    os.makedirs(out, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dynamic = {"ids": {0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC}}
        opset = {"opset_version": 23} if flavour.startswith("opset23") else {}
        torch.onnx.export(model.eval(), (ids,), f"{out}/model.onnx", input_names=["ids"],
                          output_names=["logits"], dynamo=True, optimize=not names_kept,
                          dynamic_shapes=dynamic if flavour.endswith("_dynamic") else None,
                          **opset)
    record_training(model, ids, labels, out, exported_names(model, f"{out}/model.onnx"))


# The defaults flavour leaves out the families whose export folds a
# parameter into something other than its transpose (GPT-2's and OPT's
# position rows, Gemma's 1 + w norm weights: dtc trains the folded value in
# the parameter's place, with a warning) and BLOOM, whose transformers class
# has no sdpa attention.
FLAVOURS = {"names": ["llama", "qwen2", "gpt2", "opt", "gemma", "mistral", "phi3",
                      "gpt_neox", "falcon", "bloom", "stablelm", "olmo"],
            "defaults": ["llama", "llama_tied", "qwen2", "mistral", "phi3", "gpt_neox",
                         "falcon", "stablelm", "olmo"],
            # (torch 2.9 cannot export Falcon's sdpa call at opset 23.)
            "opset23": ["llama", "llama_tied", "qwen2", "mistral", "phi3", "gpt_neox",
                        "stablelm", "olmo"],
            "names_dynamic": ["llama"], "defaults_dynamic": ["qwen2"],
            # Only for the warning (and --strict-params error) about its
            # folded position rows: train-hf5-gpt2-defaults.mlir.
            "defaults_folded": ["gpt2"],
            "opset23_dynamic": ["mistral"]}


def main():
    """make_hf5_models.py [FLAVOUR/FAMILY...] (default: all)"""
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    table = families()
    wanted = sys.argv[1:] or [f"{flavour}/{family}" for flavour, families_ in FLAVOURS.items()
                              for family in families_]
    for entry in wanted:
        flavour, family = entry.split("/")
        make(family, flavour, *table[family])


if __name__ == "__main__":
    main()
