"""``gpuvet plan``: memory, fitting GPU models, software and the questions to send a provider."""

from __future__ import annotations

import argparse

from gpuvet.errors import ExitCode


def run(args: argparse.Namespace, output) -> int:
    from gpuvet import kb as kb_module
    from gpuvet.cli.formats import render_document
    from gpuvet.recommend.plan import PlanOptions, make_plan
    from gpuvet.report.envelope import envelope
    from gpuvet.report.plan import localize_plan

    kb = kb_module.load()
    options = PlanOptions(framework=args.framework, task=args.task, model=args.model, model_size=args.model_size,
                          gpus=args.gpus, precision=args.precision, seq_len=args.seq_len, batch_size=args.batch_size,
                          checkpointing=args.checkpointing, zero_stage=args.zero_stage, lora_rank=args.lora_rank,
                          platform=args.platform, installer=args.installer)
    plan = localize_plan(make_plan(options, kb), args.lang)
    document = envelope(kb=kb.describe(), plan=plan)
    output.write(render_document("plan", document, args, output))
    return int(ExitCode.OK if any(row["fits"] for row in plan["gpus"]) else ExitCode.FAILURE)
