//! Unit tests of the command-line parsing and the `--help` text.

use super::*;

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn serve(a: &[&str], env: &dyn Fn(&str) -> Option<String>) -> Config {
    match parse(&args(a), env).unwrap() {
        Command::Serve(c) => *c,
        Command::Print(_) => panic!("expected serve"),
    }
}

/// The serving build (no `client` feature) does not offer `xmd client`
/// in its help: its usage line says the build lacks it, as running it
/// does (src/main.rs). `help()` is the variant of this build.
#[test]
fn help_offers_the_client_only_in_builds_that_have_it() {
    let with = help_for(true);
    let without = help_for(false);
    let usage = |h: &str| -> Vec<String> {
        h.lines()
            .filter(|l| {
                let l = l.trim_start();
                l.starts_with("xmd client") || l.starts_with("xmd probe")
            })
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        usage(&with),
        [
            "  xmd client [OPTIONS] CMD   talk to any MCP server (see 'xmd client --help')",
            "  xmd probe URL [OPTIONS]    check any MCP server or gateway (see 'xmd probe --help')"
        ]
    );
    assert_eq!(
        usage(&without),
        [
            "  xmd client                 not in this build (built without the `client` feature)",
            "  xmd probe                  not in this build (built without the `client` feature)"
        ]
    );
    assert!(!without.contains("xmd client --help"));
    assert!(!without.contains("talk to any MCP server"));
    assert!(!without.contains("xmd probe --help"));
    // Nothing else differs.
    let strip =
        |h: &str, lines: &[String]| lines.iter().fold(h.to_string(), |h, l| h.replace(l, ""));
    assert_eq!(
        strip(&with, &usage(&with)),
        strip(&without, &usage(&without))
    );
    assert_eq!(help(), help_for(cfg!(feature = "client")));
    match parse(&args(&["--help"]), &|_| None).unwrap() {
        Command::Print(text) => assert_eq!(text, help()),
        Command::Serve(_) => panic!("expected the help"),
    }
}

#[test]
fn upstream_io_flag_env_and_refusal() {
    use crate::config::UpstreamIo;
    let none = |_: &str| None;
    assert_eq!(serve(&[], &none).upstream_io, UpstreamIo::Loop);
    assert_eq!(
        serve(&["--upstream-io", "loop"], &none).upstream_io,
        UpstreamIo::Loop
    );
    let env = |k: &str| (k == "XMD_UPSTREAM_IO").then(|| "loop".to_string());
    assert_eq!(serve(&[], &env).upstream_io, UpstreamIo::Loop);
    assert_eq!(
        serve(&["--upstream-io", "threads"], &env).upstream_io,
        UpstreamIo::Threads
    );
    let Err(UsageError(msg)) = parse(&args(&["--upstream-io", "async"]), &none) else {
        panic!("accepted");
    };
    assert_eq!(
        msg,
        "invalid --upstream-io 'async' (expected loop or threads)"
    );
}

#[test]
fn defaults_flags_and_env() {
    let none = |_: &str| None;
    let c = serve(&[], &none);
    assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(c.upstream, "https://api.fxtwitter.com");
    assert_eq!(c.public_url, "http://127.0.0.1:8080");
    let env = |k: &str| match k {
        "XMD_LISTEN" => Some("127.0.0.1:9000".to_string()),
        "XMD_WORKERS" => Some("3".to_string()),
        _ => None,
    };
    let c = serve(
        &[
            "serve",
            "--workers=5",
            "--event-loops=3",
            "--upstream",
            "http://127.0.0.1:1/",
        ],
        &env,
    );
    assert_eq!(c.listen.to_string(), "127.0.0.1:9000");
    assert_eq!(c.workers, 5);
    assert_eq!(c.event_loops, 3);
    assert_eq!(c.upstream, "http://127.0.0.1:1");
    assert_eq!(c.public_url, "http://127.0.0.1:9000");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Any `--public-url` is refused, or every place the agent
    /// documents print it holds: a JSON string, a TOML string and one
    /// shell word read it back exactly (serde_json, toml, shlex), and
    /// `/mcp` appended lands in its path.
    #[test]
    fn an_accepted_public_url_is_safe_in_every_snippet(
        path in proptest::collection::vec(proptest::sample::select(vec![
            "a", "Z", "9", "-", ".", "_", "~", "%2F", "/", ":", "@", "[", "]", "?", "#", "\"",
            "\\", "$", "`", ";", "'", "(", ")", "&", "|", "<", ">", " ", "é", "{", "}", "*", "!", "=", "+",
        ]), 0..12),
    ) {
        let raw = format!("https://tools.example.org/{}", path.concat());
        let Ok(url) = parse_public_url("--public-url", &raw) else {
            return Ok(());
        };
        let mcp = format!("{url}/mcp");
        let json: serde_json::Value = serde_json::from_str(&format!(r#"{{"url": "{mcp}"}}"#))
            .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}: {mcp}")))?;
        proptest::prop_assert_eq!(json["url"].as_str(), Some(mcp.as_str()));
        let toml: toml::Table = format!("url = \"{mcp}\"").parse()
            .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}: {mcp}")))?;
        proptest::prop_assert_eq!(toml["url"].as_str(), Some(mcp.as_str()));
        let words = shlex::split(&format!("claude mcp add --transport http x-md {mcp}"));
        proptest::prop_assert_eq!(words.as_ref().and_then(|w| w.last()), Some(&mcp));
        proptest::prop_assert_eq!(words.map(|w| w.len()), Some(7));
        proptest::prop_assert!(!mcp.contains(['?', '#']), "{}", mcp);
    }
}

#[test]
fn bad_input_is_a_usage_error_naming_the_setting() {
    let none = |_: &str| None;
    let cases = [
        (&["--nope"][..], "unknown option '--nope'"),
        (&["--listen"][..], "--listen needs a value (ADDR)"),
        (
            &["--listen", "localhost"][..],
            "invalid listen address 'localhost' (expected IP:PORT, e.g. 127.0.0.1:8080)",
        ),
        (
            &["--workers", "0"][..],
            "invalid --workers '0' (expected a whole number >= 1)",
        ),
        (
            &["--event-loops", "0"][..],
            "invalid --event-loops '0' (expected a whole number >= 1)",
        ),
        (
            &["--event-loops", "65"][..],
            "invalid --event-loops '65' (expected at most 64)",
        ),
        (
            &["--upstream", "ftp://x"][..],
            "invalid --upstream 'ftp://x' (expected an http:// or https:// URL)",
        ),
        (
            &["--public-url", "http://127.0.0.1:18083/?x=1"][..],
            "invalid --public-url 'http://127.0.0.1:18083/?x=1' (a base URL without query or fragment, of letters, digits and -._~%/:@[] only; found '?')",
        ),
        (
            &["--public-url", "http://h/a\"b"][..],
            "invalid --public-url 'http://h/a\"b' (a base URL without query or fragment, of letters, digits and -._~%/:@[] only; found '\"')",
        ),
        (&["stray"][..], "unexpected argument 'stray'"),
    ];
    for (a, msg) in cases {
        assert_eq!(
            parse(&args(a), &none).unwrap_err(),
            UsageError(msg.to_string())
        );
    }
    let env = |k: &str| (k == "XMD_QUEUE").then(|| "many".to_string());
    assert_eq!(
        parse(&[], &env).unwrap_err(),
        UsageError("invalid XMD_QUEUE 'many' (expected a whole number >= 1)".into())
    );
}

#[test]
fn connection_cap_and_memory_budget() {
    let none = |_: &str| None;
    let c = serve(&[], &none);
    assert_eq!(c.max_connections_per_ip, 256);
    assert_eq!(c.max_buffered_bytes, 64 * 1024 * 1024);
    let c = serve(
        &[
            "--max-connections-per-ip",
            "0",
            "--max-buffered-bytes",
            "1048576",
        ],
        &none,
    );
    assert_eq!(c.max_connections_per_ip, 0);
    assert_eq!(c.max_buffered_bytes, 1_048_576);
    let env = |k: &str| (k == "XMD_MAX_CONNECTIONS_PER_IP").then(|| "8".to_string());
    assert_eq!(serve(&[], &env).max_connections_per_ip, 8);
    assert_eq!(
        parse(&args(&["--max-buffered-bytes", "-1"]), &none).unwrap_err(),
        UsageError("invalid --max-buffered-bytes '-1' (expected a whole number >= 0)".into())
    );
    assert_eq!(
        parse(&args(&["--max-buffered-bytes", "1048575"]), &none).unwrap_err(),
        UsageError(
            "invalid --max-buffered-bytes '1048575' (expected 0 or at least --max-body-bytes, 1048576)"
                .into()
        )
    );
    let c = serve(
        &["--max-buffered-bytes", "4096", "--max-body-bytes", "4096"],
        &none,
    );
    assert_eq!(c.max_buffered_bytes, 4096);
}

#[test]
fn upstream_lists_and_cache_budget() {
    let none = |_: &str| None;
    let c = serve(
        &[
            "--upstream",
            "http://127.0.0.1:1/, https://b.example",
            "--cache-bytes",
            "0",
        ],
        &none,
    );
    assert_eq!(c.upstream, "http://127.0.0.1:1,https://b.example");
    assert_eq!(c.cache_bytes, 0);
    assert_eq!(c.max_working_bytes, 64 * 1024 * 1024);
    let env = |k: &str| (k == "XMD_MAX_WORKING_BYTES").then(|| "1000".to_string());
    assert_eq!(serve(&[], &env).max_working_bytes, 1000);
    assert_eq!(
        serve(&["--max-working-bytes", "0"], &env).max_working_bytes,
        0
    );
    assert_eq!(
        parse(&args(&["--upstream", "http://a.example,ftp://b"]), &none).unwrap_err(),
        UsageError("invalid --upstream 'ftp://b' (expected an http:// or https:// URL)".into())
    );
}

#[test]
fn syndication_fallback_settings() {
    let none = |_: &str| None;
    let c = serve(&[], &none);
    assert_eq!(c.syndication_url, "https://cdn.syndication.twimg.com");
    assert_eq!(c.syndication_timeout, Duration::from_secs(5));
    let c = serve(
        &[
            "--syndication-url",
            "http://127.0.0.1:9/",
            "--syndication-timeout=2",
        ],
        &none,
    );
    assert_eq!(c.syndication_url, "http://127.0.0.1:9");
    assert_eq!(c.syndication_timeout, Duration::from_secs(2));
    // Empty turns it off, from the flag or from the environment; a
    // later flag wins over an earlier one and over the environment.
    assert_eq!(serve(&["--syndication-url", ""], &none).syndication_url, "");
    let env = |k: &str| (k == "XMD_SYNDICATION_URL").then(String::new);
    assert_eq!(serve(&[], &env).syndication_url, "");
    let c = serve(
        &[
            "--syndication-url=",
            "--syndication-url",
            "http://a.example",
        ],
        &env,
    );
    assert_eq!(c.syndication_url, "http://a.example");
    let env = |k: &str| (k == "XMD_SYNDICATION_URL").then(|| "http://b.example/".to_string());
    assert_eq!(serve(&[], &env).syndication_url, "http://b.example");
    assert_eq!(serve(&["--syndication-url", ""], &env).syndication_url, "");
    for (a, msg) in [
        (
            &["--syndication-url", "ftp://x"][..],
            "invalid --syndication-url 'ftp://x' (expected an http:// or https:// URL)",
        ),
        (
            &["--syndication-url", "http://a,http://b"][..],
            "invalid --syndication-url 'http://a,http://b' (expected one http:// or https:// URL, or an empty value to turn the fallback off)",
        ),
        (
            &["--syndication-timeout", "0"][..],
            "invalid --syndication-timeout '0' (expected a whole number of seconds from 1 to 604800)",
        ),
    ] {
        assert_eq!(parse(&args(a), &none).unwrap_err(), UsageError(msg.into()));
    }
}

/// Every setting in seconds takes 1 to MAX_SECONDS, edges included;
/// MAX_SECONDS + 1 and u64::MAX are usage errors naming the range (a
/// value near u64::MAX overflowed the deadline arithmetic before).
#[test]
fn every_seconds_setting_is_bounded() {
    let none = |_: &str| None;
    let max = crate::config::MAX_SECONDS;
    for flag in [
        "--header-timeout",
        "--body-timeout",
        "--idle-timeout",
        "--upstream-timeout",
        "--syndication-timeout",
        "--call-timeout",
        "--shutdown-grace",
    ] {
        for ok in [1, max] {
            let v = ok.to_string();
            assert!(parse(&args(&[flag, &v]), &none).is_ok(), "{flag} {v}");
        }
        for bad in [
            "0".to_string(),
            (max + 1).to_string(),
            u64::MAX.to_string(),
            "-1".into(),
            "1.5".into(),
        ] {
            assert_eq!(
                parse(&args(&[flag, &bad]), &none).unwrap_err(),
                UsageError(format!(
                    "invalid {flag} '{bad}' (expected a whole number of seconds from 1 to 604800)"
                )),
            );
        }
    }
}

#[test]
fn abuse_limits_default_and_parse() {
    let none = |_: &str| None;
    let c = serve(&[], &none);
    assert_eq!(
        (c.rate_limit, c.rate_burst, c.upstream_budget),
        (10, 60, 15)
    );
    let env = |k: &str| (k == "XMD_UPSTREAM_BUDGET").then(|| "0".to_string());
    let c = serve(&["--rate-limit", "0", "--rate-burst=5"], &env);
    assert_eq!((c.rate_limit, c.rate_burst, c.upstream_budget), (0, 5, 0));
    assert_eq!(
        parse(&args(&["--rate-burst", "0"]), &none).unwrap_err(),
        UsageError("invalid --rate-burst '0' (expected a whole number >= 1)".into())
    );
    assert_eq!(
        parse(&args(&["--rate-limit", "-1"]), &none).unwrap_err(),
        UsageError("invalid --rate-limit '-1' (expected a whole number >= 0)".into())
    );
}

#[test]
fn cursor_secret_from_flag_or_env_and_too_short_refused() {
    let none = |_: &str| None;
    assert_eq!(serve(&[], &none).cursor_secret, None);
    let long = "k".repeat(32);
    let c = serve(&["--cursor-secret", &long], &none);
    assert_eq!(
        c.cursor_secret,
        Some(config::CursorSecret(long.clone().into_bytes()))
    );
    let env = |k: &str| (k == "XMD_CURSOR_SECRET").then(|| "e".repeat(40));
    assert_eq!(
        serve(&[], &env).cursor_secret.unwrap().0,
        "e".repeat(40).into_bytes()
    );
    // A flag wins over the environment.
    assert_eq!(
        serve(&["--cursor-secret", &long], &env)
            .cursor_secret
            .unwrap()
            .0,
        long.as_bytes()
    );
    // 31 bytes: refused, and the value is not echoed.
    let short = "s3cr3t-value-of-31-bytes-xxxxxx";
    assert_eq!(short.len(), 31);
    let e = parse(&args(&["--cursor-secret", short]), &none).unwrap_err();
    assert_eq!(e, UsageError("invalid --cursor-secret: 31 bytes, expected at least 32 (a random secret, e.g. `openssl rand -hex 32`; the same on every replica)".into()));
    let env = |k: &str| (k == "XMD_CURSOR_SECRET").then(|| "short".to_string());
    let e = parse(&args(&[]), &env).unwrap_err();
    assert!(
        e.0.starts_with("invalid XMD_CURSOR_SECRET: 5 bytes"),
        "{}",
        e.0
    );
    assert!(!format!("{:?}", serve(&["--cursor-secret", &long], &none)).contains(&long));
}

#[test]
fn help_lists_every_setting_with_env() {
    let text = match parse(&args(&["--help"]), &|_| None).unwrap() {
        Command::Print(t) => t,
        Command::Serve(_) => panic!(),
    };
    for s in settings() {
        assert!(text.contains(s.flag) && text.contains(s.env), "{}", s.flag);
    }
}
