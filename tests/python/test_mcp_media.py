"""`read_media` over MCP under the official Python SDK: an image comes back as image content
(`type: image`, base64 `data`, `mimeType`) and a PDF as an embedded resource (`blob`,
`mimeType`), beside the structured result; a hidden image is refused like a missing file,
and every call is audited."""

import base64
import json

from mcp_harness import ROOT, run, structured

FIXTURES = ROOT / "tests" / "fixtures" / "media"
IMAGES = {
    "pixels.png": "image/png",
    "gradient.jpg": "image/jpeg",
    "checks.gif": "image/gif",
    "pixels.webp": "image/webp",
}


def wire(block):
    """A content block as the wire carries it (camelCase names)."""
    return block.model_dump(by_alias=True, exclude_none=True)


def test_images_are_image_content_and_a_pdf_an_embedded_resource(repo, tmp_path):
    (repo / "assets").mkdir()
    for name in [*IMAGES, "page.pdf"]:
        (repo / "assets" / name).write_bytes((FIXTURES / name).read_bytes())
    log = tmp_path / "audit.jsonl"

    async def body(s):
        out = {}
        for name in [*IMAGES, "page.pdf"]:
            out[name] = await s.call_tool("read_media", {"path": f"assets/{name}"})
        return out

    out = run(repo, body, "--audit-log", str(log))
    for name, mime in IMAGES.items():
        result, raw = out[name], (FIXTURES / name).read_bytes()
        assert not result.is_error, result
        summary, image, text = (wire(b) for b in result.content)
        assert summary["type"] == "text" and mime in summary["text"]
        assert image["type"] == "image" and image["mimeType"] == mime, name
        assert base64.b64decode(image["data"], validate=True) == raw, name
        data = structured(result)
        assert data["mime_type"] == mime and data["size"] == len(raw)
        assert base64.b64decode(data["data_base64"], validate=True) == raw
        # The JSON text is the result less the base64, which the image block carries.
        assert json.loads(text["text"]) == {k: v for k, v in data.items() if k != "data_base64"}

    pdf, raw = out["page.pdf"], (FIXTURES / "page.pdf").read_bytes()
    assert not pdf.is_error, pdf
    embedded = wire(pdf.content[1])
    assert embedded["type"] == "resource", embedded
    resource = embedded["resource"]
    assert resource["uri"] == "file:///assets/page.pdf"
    assert resource["mimeType"] == "application/pdf"
    assert base64.b64decode(resource["blob"], validate=True) == raw
    assert structured(pdf)["mime_type"] == "application/pdf"

    events = [json.loads(line) for line in log.read_text().splitlines()]
    media = [e for e in events if e["tool"] == "read_media"]
    assert len(media) == len(IMAGES) + 1
    assert all(e["ok"] for e in media)
    assert media[-1]["paths_read"] == ["assets/page.pdf"] and media[-1]["bytes_read"] == len(raw)


def test_a_hidden_image_is_refused_like_a_missing_file_and_a_lie_is_named(repo, tmp_path):
    (repo / "private").mkdir()
    (repo / "private" / "logo.png").write_bytes((FIXTURES / "pixels.png").read_bytes())
    (repo / "notes.png").write_text("text, not a picture\n")
    policy = tmp_path / "policy.toml"
    policy.write_text('[read]\nblock = ["private/**"]\n')

    async def body(s):
        return [
            await s.call_tool("read_media", {"path": p})
            for p in ("private/logo.png", "private/none.png", "notes.png")
        ]

    hidden, missing, lie = run(repo, body, "--policy", str(policy))
    for r in (hidden, missing, lie):
        assert r.is_error and [b.type for b in r.content] == ["text"], r
    shape = lambda r, p: json.dumps(structured(r)).replace(p, "P")
    assert shape(hidden, "private/logo.png") == shape(missing, "private/none.png")
    assert structured(hidden)["error"]["code"] == "NOT_FOUND"
    assert structured(lie)["error"]["code"] == "UNSUPPORTED_MEDIA"
    assert "read_file" in structured(lie)["error"]["message"]


def test_resources_read_serves_images_and_pdfs_as_blobs(repo):
    """`resources/read` of an image or a PDF answers a blob with its MIME type (the text
    read refuses them as binary); a binary file that is neither is still refused, and a
    hidden image answers like a missing one."""
    (repo / "assets").mkdir()
    for name in ("pixels.png", "page.pdf"):
        (repo / "assets" / name).write_bytes((FIXTURES / name).read_bytes())
    (repo / "assets" / "blob.bin").write_bytes(b"\x00\x01\x02 not media\n")
    (repo / "private").mkdir()
    (repo / "private" / "logo.png").write_bytes((FIXTURES / "pixels.png").read_bytes())
    policy = repo.parent / "media-policy.toml"
    policy.write_text('[read]\nblock = ["private/**"]\n')

    async def body(s):
        out = {}
        for name in ("pixels.png", "page.pdf"):
            out[name] = (await s.read_resource(f"file:///assets/{name}")).contents[0]
        for name, uri in {
            "bin": "file:///assets/blob.bin",
            "hidden": "file:///private/logo.png",
            "missing": "file:///private/none.png",
        }.items():
            try:
                await s.read_resource(uri)
                out[name] = None
            except Exception as e:  # the SDK raises its MCPError
                out[name] = e.error
        return out

    out = run(repo, body, "--policy", str(policy))
    for name, mime in (("pixels.png", "image/png"), ("page.pdf", "application/pdf")):
        c = out[name]
        assert c.mime_type == mime, c
        assert base64.b64decode(c.blob) == (FIXTURES / name).read_bytes()
    assert out["bin"] is not None and "UNSUPPORTED_BINARY" in out["bin"].message
    assert out["hidden"] is not None and out["missing"] is not None
    assert out["hidden"].code == out["missing"].code
    assert out["hidden"].message.replace("logo", "none") == out["missing"].message
