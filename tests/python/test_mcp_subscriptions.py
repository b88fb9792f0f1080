"""Resource subscriptions (`resources/subscribe`): a subscribed file changed from outside
the server brings `notifications/resources/updated` for its URI, debounced, and nothing
after unsubscribing; a file the read policy hides can neither be subscribed to nor heard
of, and a refusal does not tell whether the file exists. Each refusal has an allowed file
beside it that goes through."""

import asyncio
import time
import warnings

import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from mcp_harness import run

# Long enough for the watch's debounce (200 ms, 2 s at most in a busy tree) on a loaded machine.
WAIT = 8.0
# How long a notification that should not come is waited for, after one that should.
QUIET = 1.5


@pytest.fixture(autouse=True)
def _legacy_subscribe_is_what_we_test():
    # The SDK marks resources/subscribe as the pre-2026-07-28 way; that is the one served.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


class Updates:
    """Collects the `resources/updated` notifications a client receives."""

    def __init__(self):
        self.uris = []

    async def __call__(self, message):
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(str(message.params.uri))

    async def wait_for(self, uri, timeout=WAIT):
        end = time.monotonic() + timeout
        while uri not in self.uris:
            if time.monotonic() > end:
                raise AssertionError(f"no resources/updated for {uri} in {timeout}s: {self.uris}")
            await asyncio.sleep(0.05)


def serve(repo, body, *args):
    updates = Updates()
    out = run(repo, lambda s: body(s, updates), *args, message_handler=updates)
    return out, updates.uris


def test_the_server_offers_subscriptions_and_no_list_changes(repo):
    async def body(s, _):
        return s.server_capabilities.resources

    caps, _ = serve(repo, body)
    assert caps.subscribe is True
    assert not caps.list_changed


def test_a_subscribed_file_changed_from_outside_is_notified_and_others_are_not(repo):
    async def body(s, updates):
        await s.subscribe_resource("file:///src/lib.rs")
        (repo / "README.md").write_text("not subscribed\n")
        (repo / "src" / "lib.rs").write_text("pub fn changed() {}\n")
        await updates.wait_for("file:///src/lib.rs")
        await asyncio.sleep(QUIET)
        # A deletion is a change too.
        (repo / "src" / "lib.rs").unlink()
        seen = len(updates.uris)
        end = time.monotonic() + WAIT
        while len(updates.uris) == seen and time.monotonic() < end:
            await asyncio.sleep(0.05)
        return list(updates.uris)

    _, uris = serve(repo, body)
    assert uris.count("file:///src/lib.rs") >= 2, uris
    assert set(uris) == {"file:///src/lib.rs"}, uris


def test_a_burst_of_writes_gives_a_few_notifications_not_one_each(repo):
    async def body(s, updates):
        await s.subscribe_resource("file:///docs/usage.md")
        target = repo / "docs" / "usage.md"
        # Spread over a second or so, each write well within the watch's quiet time of
        # the one before: a watch that did not wait would run after most of them.
        for i in range(200):
            target.write_text(f"version {i}\n")
            await asyncio.sleep(0.005)
        await updates.wait_for("file:///docs/usage.md")
        await asyncio.sleep(QUIET + 1)
        return list(updates.uris)

    _, uris = serve(repo, body)
    # A few, not one per write: a stall of the loaded machine longer than the watch's quiet
    # time, or its longest delay passing, may split the burst once or twice more.
    assert 1 <= len(uris) <= 20, uris
    assert set(uris) == {"file:///docs/usage.md"}


def test_no_notification_after_unsubscribing(repo):
    async def body(s, updates):
        await s.subscribe_resource("file:///src/lib.rs")
        await s.subscribe_resource("file:///src/main.rs")
        await s.unsubscribe_resource("file:///src/lib.rs")
        (repo / "src" / "lib.rs").write_text("pub fn after() {}\n")
        (repo / "src" / "main.rs").write_text("fn main() {}\n")
        # The file still subscribed is heard of: the watch ran over the other's write.
        await updates.wait_for("file:///src/main.rs")
        await asyncio.sleep(QUIET)
        # With the last subscription gone, nothing more comes.
        await s.unsubscribe_resource("file:///src/main.rs")
        (repo / "src" / "main.rs").write_text("fn main() { /* again */ }\n")
        seen = len(updates.uris)
        await asyncio.sleep(QUIET + 1)
        return list(updates.uris), seen

    (uris, seen), _ = serve(repo, body)
    assert "file:///src/lib.rs" not in uris, uris
    assert len(uris) == seen, uris


def test_blocked_reserved_and_missing_files_are_refused_as_reading_refuses_them(repo, tmp_path):
    (repo / "private").mkdir()
    (repo / "private" / "plans.txt").write_text("blocked-content-77aa\n")
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text("[core]\n")
    policy = tmp_path / "policy.toml"
    policy.write_text('[read]\nblock = ["private/**"]\n')
    # Each present file that the policy hides, beside a missing one of the same kind.
    pairs = {
        "secret": ("file:///.env", "file:///.env.local"),
        "blocked": ("file:///private/plans.txt", "file:///private/none.txt"),
        "reserved": ("file:///.git/config", "file:///.git/none"),
    }

    async def refusal(call, uri):
        with pytest.raises(MCPError) as e:
            await call(uri)
        return e.value.error

    async def body(s, _):
        out = {"allowed": await s.subscribe_resource("file:///src/lib.rs")}
        for kind, (present, missing) in pairs.items():
            out[kind] = [
                await refusal(s.subscribe_resource, present),
                await refusal(s.subscribe_resource, missing),
                await refusal(s.read_resource, present),
            ]
        out["missing"] = await refusal(s.subscribe_resource, "file:///src/none.rs")
        out["escape"] = await refusal(s.subscribe_resource, "file:///../outside.txt")
        return out

    out, _ = serve(repo, body, "--policy", str(policy))
    assert out["allowed"] is not None
    for kind, (present, missing) in pairs.items():
        sub_present, sub_missing, read_present = out[kind]
        name = lambda uri: uri.removeprefix("file:///")  # noqa: E731
        # Present or missing, the answer is the same but for the name.
        assert sub_present.code == sub_missing.code, kind
        assert sub_present.message.replace(name(present), name(missing)) == sub_missing.message, kind
        # And it is what reading answers.
        assert (sub_present.code, sub_present.message) == (read_present.code, read_present.message)
        assert "blocked-content-77aa" not in sub_present.message
    # A missing file the policy does not hide is refused with the same protocol code.
    assert out["missing"].code == out["secret"][0].code
    assert "do not touch" not in out["escape"].message


def test_changes_to_a_secret_are_never_notified(repo):
    async def body(s, updates):
        with pytest.raises(MCPError):
            await s.subscribe_resource("file:///.env")
        # An allowed hidden file beside it is heard of.
        await s.subscribe_resource("file:///.gitignore")
        for i in range(5):
            (repo / ".env").write_text(f"API_KEY=changed-{i}\n")
        (repo / ".gitignore").write_text("target/\nnew/\n")
        await updates.wait_for("file:///.gitignore")
        (repo / ".env").unlink()
        await asyncio.sleep(QUIET + 1)
        return list(updates.uris)

    _, uris = serve(repo, body)
    assert not any(".env" in u for u in uris), uris
    assert "file:///.gitignore" in uris


def test_the_agents_own_changes_since_calls_do_not_end_the_notifications(repo):
    """Each changes_since call without a token keeps a snapshot, and the state directory
    keeps only the newest few: the watch's own token expires under a busy agent. The watch
    then starts again and tells of every subscribed file, so none is missed."""

    async def body(s, updates):
        await s.subscribe_resource("file:///src/lib.rs")
        # Positive control: the watch runs.
        (repo / "src" / "lib.rs").write_text("pub fn one() {}\n")
        await updates.wait_for("file:///src/lib.rs")
        await asyncio.sleep(QUIET)
        for _ in range(12):
            r = await s.call_tool("changes_since", {})
            assert not r.is_error, r
        updates.uris.clear()
        (repo / "src" / "lib.rs").write_text("pub fn two() {}\n")
        await updates.wait_for("file:///src/lib.rs")
        # And it keeps working after the restart.
        await asyncio.sleep(QUIET)
        updates.uris.clear()
        (repo / "src" / "lib.rs").write_text("pub fn three() {}\n")
        await updates.wait_for("file:///src/lib.rs")
        return True

    done, _ = serve(repo, body)
    assert done
