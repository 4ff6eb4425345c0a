//! The settings' loading and validation.

use super::*;

#[test]
fn email_settings_are_checked_and_the_smtp_password_never_printed() {
    let s = load_str("", &[]).unwrap();
    assert_eq!(s.email.transport, EmailTransport::File);
    assert_eq!(s.email.from, "Tollgate <noreply@localhost>");
    for (toml, key) in [
        ("[email]\ntransport = \"smtp\"\n", "email.smtp_url"),
        (
            "[email]\ntransport = \"smtp\"\nsmtp_url = \"http://x\"\n",
            "email.smtp_url",
        ),
        ("[email]\nfrom = \"not an address\"\n", "email.from"),
        ("[email]\nmax_attempts = 0\n", "email.max_attempts"),
        (
            "[email]\nnotice_window_secs = 86401\n",
            "email.notice_window_secs",
        ),
        ("[email]\nworkers = 0\n", "email.workers"),
        ("[email]\ntransport = \"pigeon\"\n", "transport"),
    ] {
        let err = load_str(toml, &[]).unwrap_err().to_string();
        assert!(err.contains(key), "{toml}: {err}");
    }
    let s = load_str(
        "",
        &[
            ("TOLLGATE__EMAIL__TRANSPORT", "smtp"),
            (
                "TOLLGATE__EMAIL__SMTP_URL",
                "smtps://mailer:hunter2@smtp.example.com:465",
            ),
            ("TOLLGATE__EMAIL__FROM", "Acme <noreply@acme.example>"),
        ],
    )
    .unwrap();
    assert_eq!(s.email.transport, EmailTransport::Smtp);
    let printed = format!("{s:?}");
    assert!(!printed.contains("hunter2"), "{printed}");
    assert!(printed.contains("smtp.example.com"), "{printed}");
}

fn load_str(toml: &str, env: &[(&str, &str)]) -> Result<Settings, ConfigError> {
    let mut f = Figment::from(Serialized::defaults(Settings::default())).merge(Toml::string(toml));
    // Same env mapping as `load`, from a fixed list instead of the process environment.
    for (k, v) in env {
        let key = k
            .strip_prefix("TOLLGATE__")
            .unwrap()
            .to_lowercase()
            .replace("__", ".");
        f = f.merge(Serialized::default(&key, v));
    }
    Settings::from_figment(f)
}

#[test]
fn defaults() {
    let s = load_str("", &[]).unwrap();
    assert_eq!(s.server.bind, "127.0.0.1:8000");
    assert_eq!(s.storage.data_dir, PathBuf::from("./data"));
    assert_eq!(s.storage.durability, Durability::Process);
}

#[test]
fn file_values_apply() {
    let s = load_str(
        "[server]\nbind = \"0.0.0.0:9000\"\n[storage]\ndurability = \"power\"\n",
        &[],
    )
    .unwrap();
    assert_eq!(s.server.bind, "0.0.0.0:9000");
    assert_eq!(s.storage.durability, Durability::Power);
}

#[test]
fn a_short_metrics_token_or_a_bad_proxy_stops_start_up() {
    let err = load_str("[metrics]\ntoken = \"short\"\n", &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("metrics.token") && err.contains("32"), "{err}");
    let long = "x".repeat(32);
    load_str(&format!("[metrics]\ntoken = \"{long}\"\n"), &[]).unwrap();
    load_str("[metrics]\ntoken = \"\"\n", &[]).unwrap();
    let err = load_str("[webhooks]\nproxy = \"socks://x\"\n", &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("webhooks.proxy"), "{err}");
    let s = load_str("[webhooks]\nproxy = \"http://proxy.internal:3128\"\n", &[]).unwrap();
    assert_eq!(s.webhooks.proxy, "http://proxy.internal:3128");
    let err = load_str("[oauth2]\nmax_outstanding_codes = 0\n", &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("max_outstanding_codes"), "{err}");
}

#[test]
fn unknown_keys_are_named() {
    let err = load_str("[server]\nbnd = \"x\"\n", &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("bnd"), "{err}");
    let err = load_str("[servr]\nbind = \"x\"\n", &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("servr"), "{err}");
}

#[test]
fn a_misconfigured_stripe_processor_is_refused_with_the_key_named() {
    let err = load_str("[payments]\nprocessor = \"stripe\"\n", &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("payments.stripe_secret_key"), "{err}");
    let ok = "[payments]\nprocessor = \"stripe\"\nstripe_secret_key = \"sk_test_1\"\n\
              stripe_publishable_key = \"pk_test_1\"\nstripe_webhook_secret = \"whsec_1\"\n";
    let s = load_str(ok, &[]).unwrap();
    assert_eq!(s.payments.processor, ProcessorKind::Stripe);
    assert_eq!(s.payments.stripe_api_base, STRIPE_API_BASE);
    assert_eq!(s.payments.stripe_js_url, STRIPE_JS_URL);
    for (url, accepted) in [
        ("https://js.example.com/v3/", true),
        ("http://127.0.0.1:8420/js.stripe.com/v3/", true),
        ("http://localhost:8420/js.stripe.com/v3/", true),
        ("http://[::1]:8420/v3/", true),
        ("http://js.example.com/v3/", false),
        ("javascript:alert(1)", false),
        ("", false),
    ] {
        let toml = format!("{ok}stripe_js_url = \"{url}\"\n");
        match load_str(&toml, &[]) {
            Ok(s) => {
                assert!(accepted, "{url} was accepted");
                assert_eq!(s.payments.stripe_js_url, url);
            }
            Err(e) => {
                assert!(!accepted, "{url} was refused: {e}");
                assert!(e.to_string().contains("payments.stripe_js_url"), "{e}");
            }
        }
    }
    let err = load_str(&ok.replace("whsec_1", "nope"), &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("payments.stripe_webhook_secret"), "{err}");
    // The keys never show in a debug print of the settings.
    let printed = format!("{s:?}");
    assert!(
        !printed.contains("sk_test_1") && !printed.contains("whsec_1"),
        "{printed}"
    );
    let err = load_str("[payments]\nprocessor = \"paypal\"\n", &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("processor"), "{err}");
}

#[test]
fn bad_values_are_named() {
    let err = load_str("[storage]\ndurability = \"disk\"\n", &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("durability"), "{err}");
}

#[test]
#[allow(clippy::result_large_err)] // figment::Error is large; the closure signature is fixed.
fn the_real_environment_overrides_the_file() {
    // figment::Jail isolates environment changes to this closure.
    figment::Jail::expect_with(|jail| {
        jail.create_file("config.toml", "[server]\nbind = \"127.0.0.1:7000\"\n")?;
        jail.set_env("TOLLGATE__SERVER__BIND", "127.0.0.1:7001");
        jail.set_env("TOLLGATE__STORAGE__DATA_DIR", "/tmp/tollgate-x");
        let s = Settings::load(Path::new("config.toml"), true).map_err(|e| e.to_string())?;
        assert_eq!(s.server.bind, "127.0.0.1:7001");
        assert_eq!(s.storage.data_dir, PathBuf::from("/tmp/tollgate-x"));
        jail.set_env("TOLLGATE__SERVER__NOPE", "1");
        let err = Settings::load(Path::new("config.toml"), true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope"), "{err}");
        Ok(())
    });
}

#[test]
#[allow(clippy::result_large_err)] // figment::Error is large; the closure signature is fixed.
fn the_postgres_backend_is_chosen_and_checked_from_the_environment() {
    figment::Jail::expect_with(|jail| {
        jail.create_file("config.toml", "")?;
        let s = Settings::load(Path::new("config.toml"), true).map_err(|e| e.to_string())?;
        assert_eq!(s.storage.backend(), tollgate_storage::Backend::Embedded);
        jail.set_env("TOLLGATE__STORAGE__BACKEND", "postgres");
        // A database is required.
        let err = Settings::load(Path::new("config.toml"), true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("storage.url"), "{err}");
        jail.set_env("TOLLGATE__STORAGE__URL", "postgres://u:p@db:5432/shop");
        jail.set_env("TOLLGATE__STORAGE__SCHEMA", "Shop-1");
        let err = Settings::load(Path::new("config.toml"), true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("storage.schema"), "{err}");
        jail.set_env("TOLLGATE__STORAGE__SCHEMA", "shop_1");
        jail.set_env("TOLLGATE__STORAGE__POOL_SIZE", "4");
        let s = Settings::load(Path::new("config.toml"), true).map_err(|e| e.to_string())?;
        assert_eq!(
            s.storage.store_config().backend,
            tollgate_storage::Backend::Postgres {
                url: "postgres://u:p@db:5432/shop".into(),
                schema: "shop_1".into(),
                pool_size: 4,
            }
        );
        jail.set_env("TOLLGATE__STORAGE__BACKEND", "mysql");
        assert!(Settings::load(Path::new("config.toml"), true).is_err());
        Ok(())
    });
}

#[test]
fn the_shipped_config_file_parses_and_matches_the_defaults() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let s = load_str(&text, &[]).unwrap();
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        serde_json::to_value(Settings::default()).unwrap()
    );
}

#[test]
fn a_rate_limit_with_no_window_is_refused_by_name_new_ones_too() {
    let mut s = Settings::default();
    s.validate().unwrap();
    s.rate_limits.portal_codes_per_address_client = Limit::new(5, 0);
    let err = s.validate().unwrap_err().to_string();
    assert!(
        err.contains("rate_limits.portal_codes_per_address_client.per_secs"),
        "{err}"
    );
    let mut s = Settings::default();
    s.rate_limits.sign_in_per_ip = Limit::new(5, 0);
    assert!(s.validate().is_err());
}

#[test]
fn the_database_password_never_prints() {
    let mut s = Settings::for_tests(Path::new("/tmp/x"));
    s.storage.url = "postgres://tollgate:s3cr3t@db:5432/shop".into();
    s.storage.backend = StorageBackend::Postgres;
    let backend = s.storage.store_config().backend;
    for shown in [
        format!("{s:?}"),
        format!("{backend:?}"),
        serde_json::to_string(&s.storage).unwrap_or_default(),
    ] {
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains("tollgate:***@db:5432/shop"), "{shown}");
    }
    let tollgate_storage::Backend::Postgres { url, .. } = backend else {
        panic!("not postgres");
    };
    assert_eq!(url.expose(), "postgres://tollgate:s3cr3t@db:5432/shop");
}

#[test]
fn the_apple_pay_file_is_read_at_start_up_and_a_bad_path_stops_it() {
    // Not configured: nothing served.
    let s = load_str("", &[]).unwrap();
    assert_eq!(s.payments.apple_pay_file(), None);
    let dir = tempfile::tempdir().unwrap();
    let file = dir
        .path()
        .join("apple-developer-merchantid-domain-association");
    std::fs::write(&file, "7B2270737049...\n").unwrap();
    let toml = format!(
        "[payments]\napple_pay_domain_association = {:?}\n",
        file.display().to_string()
    );
    let s = load_str(&toml, &[]).unwrap();
    assert_eq!(s.payments.apple_pay_file(), Some("7B2270737049...\n"));
    // A path that cannot be read, a directory, an empty file: start-up stops, naming the key.
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "  \n").unwrap();
    for path in [dir.path().join("missing"), dir.path().to_path_buf(), empty] {
        let toml = format!(
            "[payments]\napple_pay_domain_association = {:?}\n",
            path.display().to_string()
        );
        let e = load_str(&toml, &[]).expect_err("refused").to_string();
        assert!(
            e.contains("payments.apple_pay_domain_association"),
            "{path:?}: {e}"
        );
    }
}

#[test]
fn files_settings_default_as_documented_and_refuse_zero_and_short_pending() {
    let s = Settings::default();
    assert_eq!(s.files.upload_url_ttl_secs, 3600);
    assert_eq!(s.files.download_link_ttl_secs, 600);
    assert_eq!(s.files.max_file_bytes, 5 * 1024 * 1024 * 1024);
    s.validate().unwrap();
    let mut zero = Settings::default();
    zero.files.max_organization_bytes = 0;
    let err = zero.validate().unwrap_err().to_string();
    assert!(err.contains("files.max_organization_bytes"), "{err}");
    let mut short = Settings::default();
    short.files.pending_ttl_secs = 60;
    let err = short.validate().unwrap_err().to_string();
    assert!(err.contains("files.pending_ttl_secs"), "{err}");
}

#[test]
#[allow(clippy::result_large_err)] // figment::Error is large; the closure signature is fixed.
fn files_s3_is_read_from_the_file_and_environment_checked_and_never_prints_its_keys() {
    figment::Jail::expect_with(|jail| {
        jail.create_file("config.toml", "")?;
        let s = Settings::load(Path::new("config.toml"), true).map_err(|e| e.to_string())?;
        assert!(s.files.s3.is_none(), "the data directory by default");
        jail.create_file(
            "config.toml",
            "[files.s3]\nendpoint = \"http://127.0.0.1:9000\"\nbucket = \"shop-files\"\n",
        )?;
        jail.set_env("TOLLGATE__FILES__S3__ACCESS_KEY_ID", "AKIDSHOP");
        jail.set_env("TOLLGATE__FILES__S3__SECRET_ACCESS_KEY", "sup3r-s3cret");
        // A plain http endpoint needs allow_http.
        let err = Settings::load(Path::new("config.toml"), true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("files.s3.endpoint"), "{err}");
        assert!(err.contains("allow_http"), "{err}");
        jail.set_env("TOLLGATE__FILES__S3__ALLOW_HTTP", "true");
        let s = Settings::load(Path::new("config.toml"), true).map_err(|e| e.to_string())?;
        let s3 = s.files.s3.clone().expect("[files.s3]");
        assert_eq!(s3.endpoint, "http://127.0.0.1:9000");
        assert_eq!(s3.region, "us-east-1");
        assert_eq!(s3.bucket, "shop-files");
        assert_eq!(s3.access_key_id, "AKIDSHOP");
        assert_eq!(s3.secret_access_key, "sup3r-s3cret");
        assert!(s3.path_style && s3.allow_http);
        let shown = format!("{s:?}");
        assert!(
            !shown.contains("sup3r-s3cret") && !shown.contains("AKIDSHOP"),
            "{shown}"
        );
        // Bad values stop the start naming the key.
        for (key, value, named, good) in [
            (
                "ENDPOINT",
                "not a url",
                "files.s3.endpoint",
                "http://127.0.0.1:9000",
            ),
            (
                "ENDPOINT",
                "ftp://store",
                "files.s3.endpoint",
                "http://127.0.0.1:9000",
            ),
            ("BUCKET", "Shop_Files", "files.s3.bucket", "shop-files"),
            (
                "SECRET_ACCESS_KEY",
                "",
                "files.s3.secret_access_key",
                "sup3r-s3cret",
            ),
        ] {
            let var = format!("TOLLGATE__FILES__S3__{key}");
            jail.set_env(&var, value);
            let err = Settings::load(Path::new("config.toml"), true)
                .unwrap_err()
                .to_string();
            assert!(err.contains(named), "{key}={value}: {err}");
            jail.set_env(&var, good);
        }
        jail.set_env("TOLLGATE__FILES__S3__NOPE", "1");
        let err = Settings::load(Path::new("config.toml"), true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope"), "{err}");
        Ok(())
    });
}
