"""``gpuvet plan``: memory, fitting GPU models, software and the questions to send a provider."""

from __future__ import annotations

import argparse
from typing import Any, Dict

from gpuvet.errors import ExitCode
from gpuvet.i18n import render, text


def localize(plan: Dict[str, Any], lang: str) -> Dict[str, Any]:
    plan = dict(plan)
    plan["assumptions"] = [render(m, lang) for m in plan["assumptions"]]
    plan["questions"] = [text(lang, q) for q in plan["questions"]]
    plan["nvlink"] = text(lang, plan["nvlink"]) if plan.get("nvlink") else None
    plan["gpus"] = [dict(row, reason=text(lang, row["reason"]) if row.get("reason") else None) for row in plan["gpus"]]
    if plan.get("platform"):
        platform = dict(plan["platform"])
        platform["notes"] = [text(lang, note) for note in platform["notes"]]
        platform["driver"] = [text(lang, fact) for fact in platform["driver"]]
        platform["advice"] = render(platform["advice"], lang)
        platform["answers"] = [text(lang, q) for q in platform["answers"]]
        plan["platform"] = platform
    return plan


def run(args: argparse.Namespace, output) -> int:
    from gpuvet import kb as kb_module
    from gpuvet.cli.formats import render_document
    from gpuvet.recommend.plan import PlanOptions, make_plan
    from gpuvet.report.envelope import envelope

    kb = kb_module.load()
    options = PlanOptions(framework=args.framework, task=args.task, model=args.model, model_size=args.model_size,
                          gpus=args.gpus, precision=args.precision, seq_len=args.seq_len, batch_size=args.batch_size,
                          checkpointing=args.checkpointing, zero_stage=args.zero_stage, lora_rank=args.lora_rank,
                          platform=args.platform)
    plan = localize(make_plan(options, kb), args.lang)
    if getattr(args, "installer", "pip") != "pip":
        from gpuvet.checks.installer import install_lines

        for variant in (plan.get("software") or {}).get("variants", {}).values():
            variant["install"] = install_lines(variant.get("install"), args.installer, kb)
    document = envelope(kb=kb.describe(), plan=plan)
    output.write(render_document("plan", document, args, output))
    return int(ExitCode.OK if any(row["fits"] for row in plan["gpus"]) else ExitCode.FAILURE)
