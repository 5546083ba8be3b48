"""Host lists as users write them; anything that could turn into an option or a path escape is refused."""

import pytest

from gpuvet.errors import InputError
from gpuvet.sources.fleet.hosts import gather_hosts, parse_host, parse_hosts_text, safe_file_name


@pytest.mark.parametrize("text, host, user, port", [
    ("node01", "node01", None, None),
    ("ubuntu@node01", "node01", "ubuntu", None),
    ("ubuntu@node01.example.com:2222", "node01.example.com", "ubuntu", 2222),
    ("10.0.0.7:22", "10.0.0.7", None, 22),
    ("[fe80::1]:2200", "fe80::1", None, 2200),
    ("root@[::1]", "::1", "root", None),
    ("gpu_box-3", "gpu_box-3", None, None),
])
def test_parse_host(text, host, user, port):
    spec = parse_host(text)
    assert (spec.name, spec.host, spec.user, spec.port) == (text, host, user, port)


@pytest.mark.parametrize("text, fragment", [
    ("-oProxyCommand=evil", "not a valid host name"),
    ("node01:0", "invalid port"),
    ("node01:65536", "invalid port"),
    ("node01:ssh", "invalid port"),
    ("fe80::1", "brackets"),
    ("a b", "not a valid host name"),
    ("bad user@node", "invalid user"),
    ("", "empty"),
    ("node;rm -rf /", "not a valid host name"),
])
def test_bad_hosts_are_one_clear_input_error(text, fragment):
    with pytest.raises(InputError) as info:
        parse_host(text)
    assert fragment in info.value.message
    assert "\n" not in info.value.message


def test_hosts_file_with_comments_keeps_order_and_names_the_bad_line():
    text = "# rack 1\nnode01\n\n  ubuntu@node02:2222   # spare\nnode03 # last\n"
    assert [h.name for h in parse_hosts_text(text, "hosts.txt")] == ["node01", "ubuntu@node02:2222", "node03"]
    with pytest.raises(InputError) as info:
        parse_hosts_text("node01\nnode02 node03\n", "hosts.txt")
    assert info.value.message.startswith("hosts.txt:2:")


def test_gather_hosts_file_then_arguments_duplicates_once(tmp_path):
    path = tmp_path / "hosts.txt"
    path.write_text("node01\nnode02\n")
    assert [h.name for h in gather_hosts(["node03", "node01"], str(path))] == ["node01", "node02", "node03"]
    with pytest.raises(InputError):
        gather_hosts([], str(tmp_path / "missing.txt"))


@pytest.mark.parametrize("name, expected", [
    ("root@127.0.0.1:2201", "root@127.0.0.1_2201"),
    ("../../etc/passwd", "_._.._etc_passwd"),
    ("[fe80::1]:22", "_fe80__1__22"),
])
def test_safe_file_name_never_escapes_the_folder(name, expected):
    assert safe_file_name(name) == expected
    assert "/" not in safe_file_name(name) and not safe_file_name(name).startswith(".")
