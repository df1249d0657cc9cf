"""Scenario j of scripts/reliability: a JMAP account (issue 27) on the private Cyrus of scripts/test-cyrus,
killed as scenarios a and b kill an IMAP account.

  j initial      the initial sync into an empty Maildir, killed at a step (MO_CRASH_AT=k) or by SIGKILL
  j incremental  a sync after changes on both sides (server over JMAP: keywords, a move out of Inbox, a
                 destroy, a new message; local: a flag rename, a move INBOX → Archive, an unlink, a new
                 file), killed the same ways
  j cut          the initial sync and a sync after changes, through a loopback TCP proxy that cuts every
                 connection at a random byte offset of what the server sent (scripts/reliability's Proxy:
                 one budget for the session, the API calls and the downloads)

After every kill: two uninterrupted reruns (a local deletion moves the message to Trash on the server, and
the run after that one brings it into the Trash folder), then the counts against the model: every message
by content hash (CRLF as LF) in the folder its mailboxes place it in (the placement rule of docs/jmap.md),
on the server and in the Maildir, and `mo-sync-check` (bytes, keywords as letters and tags). Cyrus keeps one
Email per content, so a duplicate can only be local.
"""
import base64, collections, json, os, shutil, subprocess, urllib.request

Counter = collections.Counter
ROLE_ORDER = [("trash", "Trash"), ("junk", "Junk"), ("drafts", "Drafts"), ("inbox", "INBOX"), ("sent", "Sent"),
              ("archive", "Archive")]


class Cyrus:
    """A private Cyrus with JMAP (scripts/test-cyrus) and a small JMAP client over urllib."""

    def __init__(self, root, directory):
        self.root = root
        self.dir = directory
        r = subprocess.run([root + "/scripts/test-cyrus", "start", directory], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("scripts/test-cyrus start failed: " + r.stderr)
        self.env = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
        self.base = "http://127.0.0.1:" + self.env["MO_TEST_JMAP_PORT"]
        self.auth = "Basic " + base64.b64encode(
            (self.env["MO_TEST_USER"] + ":" + self.env["MO_TEST_PASSWORD"]).encode()).decode()
        self.account = self.env["MO_TEST_USER"]
        self.blob_hash = {}

    def stop(self):
        subprocess.run([self.root + "/scripts/test-cyrus", "stop", self.dir], capture_output=True)

    def request(self, path, data, content_type):
        req = urllib.request.Request(self.base + path, data=data,
                                     headers={"Authorization": self.auth, "Content-Type": content_type})
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.read()

    def call(self, *calls):
        body = json.dumps({"using": ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"],
                           "methodCalls": [[n, dict(a, accountId=self.account), str(i)] for i, (n, a) in enumerate(calls)]})
        answers = json.loads(self.request("/jmap/", body.encode(), "application/json"))["methodResponses"]
        for name, args, _ in answers:
            if name == "error":
                raise RuntimeError(f"JMAP error {args}")
        return [a for _, a, _ in answers]

    def mailboxes(self):
        return {m["name"]: (m["id"], m.get("role")) for m in self.call(("Mailbox/get", {"ids": None}))[0]["list"]}

    def setup_mailboxes(self):
        have = self.mailboxes()
        create = {}
        for name, role in (("Sent", "sent"), ("Trash", "trash"), ("Lists", None)):
            if name not in have:
                create[name] = {"name": name, **({"role": role} if role else {})}
        if create:
            self.call(("Mailbox/set", {"create": create}))
        self.boxes = {n: i for n, (i, _) in self.mailboxes().items()}
        self.roles = {i: r for _, (i, r) in self.mailboxes().items()}

    def upload_import(self, data, boxes, keywords):
        data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")   # Cyrus refuses bare LF
        blob = json.loads(self.request(f"/jmap/upload/{self.account}/", data, "message/rfc822"))["blobId"]
        got = self.call(("Email/import", {"emails": {"e": {"blobId": blob, "mailboxIds": {self.boxes[b]: True for b in boxes},
                                                             "keywords": {k: True for k in keywords}}}}))[0]
        created = (got.get("created") or {}).get("e") or {}
        return created.get("id") or got["notCreated"]["e"].get("existingId")

    def emails(self):
        ids = self.call(("Email/query", {"limit": 100000}))[0]["ids"]
        out = []
        for i in range(0, len(ids), 500):
            out += self.call(("Email/get", {"ids": ids[i:i + 500], "properties": ["id", "blobId", "mailboxIds", "keywords"]}))[0]["list"]
        return out

    def hash_of(self, blob, msg_hash):
        if blob not in self.blob_hash:
            with urllib.request.urlopen(urllib.request.Request(
                    f"{self.base}/jmap/download/{self.account}/{blob}/m.eml", headers={"Authorization": self.auth}), timeout=60) as r:
                self.blob_hash[blob] = msg_hash(r.read())
        return self.blob_hash[blob]

    def folder_of(self, email):
        roles = {self.roles.get(b) for b in email["mailboxIds"]}
        return next((folder for role, folder in ROLE_ORDER if role in roles), "Archive")

    def snapshot(self, msg_hash):
        """{folder: Counter(hash)} as the placement shows the server."""
        snap = {}
        for e in self.emails():
            snap.setdefault(self.folder_of(e), Counter())[self.hash_of(e["blobId"], msg_hash)] += 1
        return snap


def seed(cyrus, corpora, msg_hash):
    """80 SpamAssassin messages: 50 in Inbox (10 of them also in Lists), 15 only in Lists, 15 in Sent."""
    sa = corpora + "/spamassassin-2002/easy-ham-1/cur"
    for i, name in enumerate(sorted(os.listdir(sa))[:80]):
        with open(os.path.join(sa, name), "rb") as fh:
            data = fh.read()
        boxes = ["Inbox"] if i < 50 else ["Lists"] if i < 65 else ["Sent"]
        if i < 10:
            boxes.append("Lists")
        cyrus.upload_import(data, boxes, ["$seen"] if i % 3 else [])
    return cyrus.snapshot(msg_hash)


def write_config(sweep, name, cyrus, url=None):
    d = f"{sweep.w}/{name}"
    os.makedirs(d, exist_ok=True)
    lines = ["[general]", f'state-dir = "{d}/state"', f'index-dir = "{d}/index"', "",
             "[account.rel]", 'address = "mo@mo.test"', f'maildir = "{d}/Mail"', "[account.rel.jmap]",
             f'url = "{url or cyrus.env["MO_TEST_JMAP_URL"]}"', f'user = "{cyrus.env["MO_TEST_USER"]}"',
             f'password-command = "echo {cyrus.env["MO_TEST_PASSWORD"]}"']
    path = f"{d}/config.toml"
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return path, d


def settle(sweep, tools, sub, method, param, killed, rc, config, d, cyrus):
    rerun_rc, _, err, _ = sweep.run(sweep.sync_cmd(config))
    rerun2_rc, _, err2, _ = sweep.run(sweep.sync_cmd(config))
    ok, text = sweep.check(config)
    expected = sweep.jmap_expected
    server = cyrus.snapshot(tools.msg_hash)
    local = tools.local_snapshot(d + "/Mail")
    lost, dup, extra = tools.tally(expected, server, local)
    r = dict(scenario="j", sub=sub, method=method, param=param, killed=killed, rc=rc, rerun_rc=rerun_rc or rerun2_rc,
             check_ok=ok, lost=lost, dup=dup, extra=extra)
    if rerun_rc or rerun2_rc or not ok or lost or dup or extra:
        r["detail"] = (err.strip()[-300:] + " | " + err2.strip()[-300:] + " | " + text[-400:]).strip(" |")
        sweep.logn += 1
        keep = f"{sweep.w}/logs/problem-{sweep.logn}"
        shutil.copytree(d + "/state", keep + "-state", dirs_exist_ok=True)
        with open(keep + "-counts.json", "w") as fh:
            json.dump({"expected": expected, "server": server, "local": local}, fh, indent=1, sort_keys=True)
        r["kept"] = keep
    sweep.record(**r)


def mutate(sweep, tools, cyrus, maildir, rnd, rng):
    """One round of changes on both sides, never on the same message; `sweep.jmap_expected` follows them."""
    exp = sweep.jmap_expected
    emails = cyrus.emails()
    by_folder = collections.defaultdict(list)
    for e in emails:
        by_folder[cyrus.folder_of(e)].append(e)
    touched = set()
    inbox = [e for e in by_folder["INBOX"]]
    rng.shuffle(inbox)
    if len(inbox) >= 4:
        a, b, c = inbox[0], inbox[1], inbox[2]
        ha, hb, hc = (cyrus.hash_of(x["blobId"], tools.msg_hash) for x in (a, b, c))
        # A keyword toggled; a message out of Inbox into Lists alone (→ Archive); one destroyed.
        flagged = "$flagged" in a["keywords"]
        cyrus.call(("Email/set", {"update": {a["id"]: {"keywords/$flagged": None if flagged else True},
                                             b["id"]: {"mailboxIds": {cyrus.boxes["Lists"]: True}}},
                                  "destroy": [c["id"]] if rnd % 2 == 0 else []}))
        exp["INBOX"][hb] -= 1
        exp.setdefault("Archive", Counter())[hb] += 1
        if rnd % 2 == 0:
            exp["INBOX"][hc] -= 1
        touched |= {ha, hb, hc}
    token = f"srv-{rnd}-{rng.randrange(1 << 30):x}"
    data = (f"From: a@example.com\r\nTo: mo@mo.test\r\nSubject: {token}\r\nMessage-ID: <{token}@server.test>\r\n"
            f"\r\nBody of {token}.\r\n").encode()
    cyrus.upload_import(data, ["Inbox"], [])
    exp["INBOX"][tools.msg_hash(data)] += 1
    # Local: a flag rename, a move INBOX → Archive, an unlink every 2nd round (→ Trash), one new file.
    files = [(p, h) for p, h in tools.local_folders(maildir).get("INBOX", []) if h not in touched]
    rng.shuffle(files)
    if len(files) >= 4:
        (p1, h1), (p2, h2), (p3, h3) = files[0], files[1], files[2]
        uniq, _, info = os.path.basename(p1).partition(":2,")
        os.rename(p1, os.path.join(maildir, "INBOX", "cur", uniq + ":2," + "".join(sorted(set(info) ^ {"F"}))))
        os.makedirs(os.path.join(maildir, "Archive", "cur"), exist_ok=True)
        os.rename(p2, os.path.join(maildir, "Archive", "cur", os.path.basename(p2)))
        exp["INBOX"][h2] -= 1
        exp.setdefault("Archive", Counter())[h2] += 1
        if rnd % 2 == 1:
            os.unlink(p3)
            exp["INBOX"][h3] -= 1
            exp.setdefault("Trash", Counter())[h3] += 1
    token = f"loc-{rnd}-{rng.randrange(1 << 30):x}"
    data = (f"From: me@mo.test\nTo: you@example.com\nSubject: {token}\nMessage-ID: <{token}@local.test>\n\n"
            f"Written locally ({token}).\n").encode()
    path = os.path.join(maildir, "INBOX", "cur", tools.new_local_name(rng) + ("S" if rnd % 2 == 0 else ""))
    with open(path + ".tmp", "wb") as fh:
        fh.write(data)
    os.rename(path + ".tmp", path)
    exp["INBOX"][tools.msg_hash(data)] += 1
    for f in exp:
        exp[f] = +exp[f]


def cut_rounds(sweep, tools, cyrus, config, d):
    """Syncs cut off by the proxy at random offsets: of an initial sync, then of syncs carrying changes."""
    port = int(cyrus.env["MO_TEST_JMAP_PORT"])
    url = lambda p: f"http://127.0.0.1:{p}/jmap/"

    def through(mode, offset=0):
        proxy = tools.Proxy(port, mode, offset)
        pconfig, _ = write_config(sweep, "j", cyrus, url=url(proxy.port))
        rc, _, _, _ = sweep.run(sweep.sync_cmd(pconfig))
        proxy.stop()
        write_config(sweep, "j", cyrus)   # the direct config again, for the reruns
        return rc, proxy.relayed

    sweep.reset(d)
    _, total = through("pass")
    tools.log(f"j: an initial sync reads {total} bytes through the proxy")
    for _ in range(sweep.n(15, 4)):
        sweep.reset(d)
        offset = sweep.rng.randrange(0, total)
        rc, _ = through("cut", offset)
        settle(sweep, tools, "cut-initial", "cut", offset, False, rc, config, d, cyrus)
    mutate(sweep, tools, cyrus, d + "/Mail", 1000, sweep.rng)
    rc, incr_total = through("pass")
    settle(sweep, tools, "cut-incremental", "pass", incr_total, False, rc, config, d, cyrus)
    for i in range(sweep.n(10, 3)):
        mutate(sweep, tools, cyrus, d + "/Mail", 1001 + i, sweep.rng)
        offset = sweep.rng.randrange(0, int(incr_total * 1.1) + 1)
        rc, _ = through("cut", offset)
        settle(sweep, tools, "cut-incremental", "cut", offset, False, rc, config, d, cyrus)


def scenario_j(sweep, tools, corpora):
    tools.log("j: a JMAP account on Cyrus, killed")
    cyrus = Cyrus(tools.ROOT, sweep.w + "/cyrus")
    try:
        cyrus.setup_mailboxes()
        seed(cyrus, corpora, tools.msg_hash)
        config, d = write_config(sweep, "j", cyrus)
        sweep.jmap_expected = cyrus.snapshot(tools.msg_hash)
        sweep.reset(d)
        steps = sweep.step_count(sweep.sync_cmd(config))
        sweep.reset(d)
        rc, _, _, secs = sweep.run(sweep.sync_cmd(config))
        tools.log(f"j: {steps} steps, uninterrupted initial run {secs:.2f} s (rc {rc})")
        plan = [("step", sweep.rng.randint(1, steps)) for _ in range(sweep.n(20, 5))]
        plan += [("sigkill", round(sweep.rng.uniform(0.02, secs), 3)) for _ in range(sweep.n(15, 4))]
        for method, param in plan:
            sweep.reset(d)
            killed, rc = sweep.killed_run(sweep.sync_cmd(config), method, param)
            settle(sweep, tools, "initial", method, param, killed, rc, config, d, cyrus)
        for rnd in range(sweep.n(30, 8)):
            mutate(sweep, tools, cyrus, d + "/Mail", rnd, sweep.rng)
            cmd = sweep.sync_cmd(config)
            # A step number past the run's last step lets it finish: that run counts, unkilled.
            if rnd % 2 == 0:
                method, param = "step", sweep.rng.randint(1, 60)
            else:
                method, param = "sigkill", round(sweep.rng.uniform(0.01, 0.4), 3)
            killed, rc = sweep.killed_run(cmd, method, param)
            settle(sweep, tools, "incremental", method, param, killed, rc, config, d, cyrus)
        cut_rounds(sweep, tools, cyrus, config, d)
    finally:
        cyrus.stop()
