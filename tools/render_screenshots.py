"""Render the real captures in tests/fixtures/ as terminal screenshots, then do to them what chat apps do.

No terminal emulator runs on the build machine (no xterm, no Xvfb), so each capture is drawn the way a terminal
draws it: a fixed cell grid in a real monospace font (DejaVu Sans Mono, Noto Sans Mono CJK), dark and light themes,
on a full-screen 1920-pixel-wide canvas or a window-sized one. Then the chat variants: downscaled to 1080 pixels wide
and saved as JPEG at quality 60-80 (WeChat and QQ re-encode this way), or cropped to the table. A few console pages
in Chinese and English (a provider's instance page: GPU model and count, driver, CUDA, image) are drawn with
Noto Sans CJK; their values are real NVIDIA releases, their layout is made up (no provider's page is copied).

Each image comes with the facts it must yield (``manifest.json``): taken from the capture's text by gpuvet's own
text parsers, so the OCR path is judged against what a paste of the same text gives.

    python tools/render_screenshots.py OUT_DIR [--small]    # --small: the set kept in tests/fixtures/screenshots
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
MONO_CJK = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc#7"  # face 7 of the collection: Noto Sans Mono CJK SC
SANS_CJK = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"

THEMES = {"dark": ((12, 12, 12), (204, 204, 204)), "light": ((255, 255, 255), (30, 30, 30)),
          "solarized": ((0, 43, 54), (147, 161, 161))}

# (fixture, what it shows): nvidia-smi tables of every era the fixtures hold, -L, nvcc, pip.
CAPTURES = [
    "nvidia-smi/grid-k520-1gpu_drv346.46.txt",
    "nvidia-smi/gtx-1080ti+titan-xp-4gpu_drv418.39.txt",
    "nvidia-smi/a100-sxm4-40gb-1gpu_drv450.80.02_mig-disabled.txt",
    "nvidia-smi/a800-80gb-pcie-8gpu_drv525.125.06_mig-pending.txt",
    "nvidia-smi/a10-1gpu_drv550.90.12.txt",
    "nvidia-smi/rtx-4090-8gpu_drv550.127.05.txt",
    "nvidia-smi/h100-nvl-2gpu_drv550.54.14.txt",
    "nvidia-smi/rtx-5090-1gpu_drv570.124.06.txt",
    "nvidia-smi/h100-80gb-hbm3-1gpu_drv590.48.01_load.txt",
    "nvidia-smi/rtx-2080-super-1gpu_drv610.57.04_idle.txt",
    "nvidia-smi/rtx-2080-super-1gpu_drv591.86_windows_idle.txt",
    "nvidia-smi/l40s-1gpu_drv595.80_idle.txt",
    "nvidia-smi-L/h100-80gb-hbm3-1gpu_drv590.48.01.txt",
    "nvidia-smi-L/tesla-p100-pcie-16gb-4gpu.txt",
    "nvcc-version/cuda-12.6_V12.6.85.txt",
    "nvcc-version/cuda-11.5_V11.5.119_ubuntu-apt.txt",
    "pip-list/torch2.13.0-cpu_local-venv.txt",
    "pip-freeze/torch2.13.0-cpu_local-venv.txt",
]

# Console pages: (language, lines, the facts they state). Driver/CUDA pairs are NVIDIA's (R535 reports CUDA 12.2,
# R550 12.4, R570 12.8); GPU names as nvidia-smi prints them.
CONSOLES = [
    ("zh", ["实例详情", "GPU型号: NVIDIA A100-SXM4-80GB x 8", "驱动版本: 535.104.05", "CUDA版本: 12.2",
            "镜像: PyTorch 2.1.0 / Python 3.10 / CUDA 12.1", "数据盘: 50GB"],
     {"driver": "535.104.05", "cuda": "12.2", "gpus": ["NVIDIA A100-SXM4-80GB"] * 8, "torch": "2.1.0"}),
    ("zh", ["容器实例", "显卡: NVIDIA GeForce RTX 4090 x 2", "驱动: 550.54.14", "CUDA版本: 12.4",
            "镜像: PyTorch 2.3.0 / Python 3.12 / CUDA 12.1"],
     {"driver": "550.54.14", "cuda": "12.4", "gpus": ["NVIDIA GeForce RTX 4090"] * 2, "torch": "2.3.0"}),
    ("en", ["Instance details", "GPU: NVIDIA H100 80GB HBM3 x 8", "Driver Version: 570.124.06", "CUDA Version: 12.8",
            "Image: PyTorch 2.6.0 / Python 3.11 / CUDA 12.4"],
     {"driver": "570.124.06", "cuda": "12.8", "gpus": ["NVIDIA H100 80GB HBM3"] * 8, "torch": "2.6.0"}),
]


def expected_facts(text: str) -> Dict[str, Any]:
    """What gpuvet's text parsers take from the capture: the facts the screenshot of it must yield."""
    from gpuvet import kb
    from gpuvet.ingest import detect_kind, parse

    snapshot = parse(detect_kind(text) or "", text, "capture")
    facts: Dict[str, Any] = {}
    driver = snapshot.get("driver") or {}
    if (driver.get("version") or {}).get("status") == "found":
        facts["driver"] = driver["version"]["value"]
    if (driver.get("cuda_max") or {}).get("status") == "found":
        facts["cuda"] = driver["cuda_max"]["value"]
    gpus = (snapshot.get("gpus") or {}).get("value")
    if gpus:
        models = kb.load()
        facts["gpus"] = [(models.gpu(g["name"]).name if models.gpu(g["name"]) else g["name"]) for g in gpus]
        memory = [g.get("memory_total_mib") for g in gpus]
        if any(m is not None for m in memory):
            facts["memory_mib"] = memory
    toolkits = (snapshot.get("cuda_toolkits") or {}).get("value")
    if toolkits:
        facts["toolkit"] = toolkits[0]["version"]
    frameworks = (snapshot.get("frameworks") or {}).get("value") or {}
    if "torch" in frameworks:
        facts["torch"] = frameworks["torch"]["version"]
    return facts


def draw_terminal(text: str, font_path: str, size: int, theme: str, canvas: Optional[Tuple[int, int]]) -> Any:
    """The text on a terminal's cell grid: every character in its own cell, as a terminal emulator places it."""
    from PIL import Image, ImageDraw, ImageFont

    path, _, face = font_path.partition("#")
    font = ImageFont.truetype(path, size, index=int(face or 0))
    cell_w = int(round(font.getlength("M")))
    cell_h = int(round(size * 1.25))
    lines = text.rstrip("\n").split("\n")
    width = max(len(line) for line in lines) * cell_w + 2 * cell_w
    height = len(lines) * cell_h + 2 * cell_h
    background, foreground = THEMES[theme]
    if canvas:
        width, height = max(canvas[0], width), max(canvas[1], height)
    image = Image.new("RGB", (width, height), background)
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        for column, char in enumerate(line):
            if char != " ":
                draw.text((cell_w * (column + 1), cell_h * (row + 1)), char, font=font, fill=foreground)
    return image


def draw_console(lines: List[str], theme: str) -> Any:
    from PIL import Image, ImageDraw, ImageFont

    title = ImageFont.truetype(SANS_CJK, 30, index=2)  # Noto Sans CJK SC
    body = ImageFont.truetype(SANS_CJK, 22, index=2)
    background, foreground = THEMES[theme]
    image = Image.new("RGB", (1280, 120 + 48 * len(lines)), background)
    draw = ImageDraw.Draw(image)
    draw.text((40, 30), lines[0], font=title, fill=foreground)
    for row, line in enumerate(lines[1:]):
        key, _, value = line.partition(": ")
        draw.text((60, 100 + 48 * row), key, font=body, fill=(120, 120, 120) if theme == "light" else (150, 150, 150))
        draw.text((320, 100 + 48 * row), value, font=body, fill=foreground)
    return image


def chat(image: Any, quality: int, crop: bool) -> Tuple[Any, str]:
    """What a chat app sends on: the content's box cropped (a renter's own crop), then at most 1080 pixels wide."""
    from PIL import ImageOps

    if crop:
        background = image.getpixel((0, 0))
        inverted = ImageOps.invert(image) if sum(background) > 380 else image
        box = inverted.convert("L").point(lambda v: 255 if v > 60 else 0).getbbox()
        if box:
            image = image.crop((max(box[0] - 12, 0), max(box[1] - 12, 0), box[2] + 12, box[3] + 12))
    if image.width > 1080:
        image = image.resize((1080, round(image.height * 1080 / image.width)), resample=3)  # bicubic
    return image, "jpeg"


def corpus(small: bool) -> List[Tuple[str, Any, str, Dict[str, Any], Dict[str, Any]]]:
    """(file name, image, format, save options, expected facts) for every image of the corpus."""
    styles = [("dark", MONO, 16, (1920, 1080)), ("light", MONO, 14, None), ("solarized", MONO_CJK, 18, None)]
    chats = [(None, False), (75, False), (60, True)]
    if small:
        styles, chats = styles[:2], [(None, False), (70, True)]
    images = []
    for number, relative in enumerate(CAPTURES):
        text = (FIXTURES / relative).read_text(encoding="utf-8")
        facts = expected_facts(text)
        stem = relative.replace("/", "__").rsplit(".", 1)[0]
        for style_number, (theme, font, size, canvas) in enumerate(styles):
            if small and (number + style_number) % 3:
                continue  # the kept set: a third of the captures per style, every era still shown
            screen = draw_terminal(text, font, size, theme, canvas)
            # the full corpus rotates the chat treatments over styles: every capture once as sent, once recompressed,
            # once cropped and recompressed (66 images: an OCR run over them stays short on a shared machine)
            for quality, crop in chats if small else [chats[(number + style_number) % len(chats)]]:
                if quality is None:
                    name = f"{stem}__{theme}{size}.png"
                    images.append((name, screen, "png", {"optimize": True}, facts))
                else:
                    sent, fmt = chat(screen, quality, crop)
                    name = f"{stem}__{theme}{size}__chat{'-crop' if crop else ''}-q{quality}.jpg"
                    images.append((name, sent, fmt, {"quality": quality}, facts))
    for number, (lang, lines, facts) in enumerate(CONSOLES):
        for theme in ("light", "dark") if not small else ("light",):
            page = draw_console(lines, theme)
            images.append((f"console-{lang}-{number}__{theme}.png", page, "png", {"optimize": True}, facts))
            if not small:
                sent, fmt = chat(page, 70, False)
                images.append((f"console-{lang}-{number}__{theme}__chat-q70.jpg", sent, fmt, {"quality": 70}, facts))
    return images


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--small", action="store_true", help="the small set kept in tests/fixtures/screenshots")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for name, image, fmt, options, facts in corpus(args.small):
        image.save(args.out / name, format=fmt.upper(), **options)
        manifest[name] = facts
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
    print(f"{len(manifest)} images in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
