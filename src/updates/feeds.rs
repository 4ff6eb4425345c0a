//! The feeds' texts: electron-updater's generic-provider YAML (`latest*.yml`) and Sparkle's
//! appcast (RSS 2.0 with Sparkle's namespace). Written by hand, every value escaped: a
//! release's notes and file names are the seller's text.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::SecondsFormat;

use crate::domain::release::{Channel, Release, ReleaseArtifact};

/// Tauri's static `latest.json`: one version, a file per platform key (`{os}-{arch}`
/// and `{os}-{arch}-{bundle}`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TauriStatic {
    pub version: String,
    pub notes: Option<String>,
    /// RFC 3339.
    pub pub_date: Option<String>,
    pub platforms: std::collections::BTreeMap<String, TauriPlatform>,
}

/// A platform's file in [`TauriStatic`]: the signed link and the base64 of the minisign
/// signature file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TauriPlatform {
    pub url: String,
    pub signature: String,
}

/// An artifact as a feed lists it: with the signed link it is downloaded from.
pub struct Listed<'a> {
    pub artifact: &'a ReleaseArtifact,
    pub url: String,
}

/// A YAML double-quoted scalar (JSON's string syntax is one).
fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// electron-updater's `UpdateInfo` for `release` with `files` (the platform's artifacts,
/// the preferred first): `version`, `files[]` (`url`, `sha512` in base64, `size`), the
/// deprecated `path`/`sha512` of the first file, `releaseDate`, `releaseName`,
/// `releaseNotes` and `minimumSystemVersion`.
pub fn electron_yaml(release: &Release, files: &[Listed<'_>]) -> String {
    let mut out = format!("version: {}\nfiles:\n", yaml_str(&release.version));
    for f in files {
        out.push_str(&format!(
            "  - url: {}\n    sha512: {}\n    size: {}\n",
            yaml_str(&f.url),
            yaml_str(&STANDARD.encode(&f.artifact.sha512)),
            f.artifact.size
        ));
    }
    if let Some(first) = files.first() {
        out.push_str(&format!(
            "path: {}\nsha512: {}\n",
            yaml_str(&first.url),
            yaml_str(&STANDARD.encode(&first.artifact.sha512))
        ));
    }
    if let Some(at) = release.published_at {
        out.push_str(&format!(
            "releaseDate: {}\n",
            yaml_str(&at.to_rfc3339_opts(SecondsFormat::Millis, true))
        ));
    }
    out.push_str(&format!("releaseName: {}\n", yaml_str(&release.version)));
    if let Some(notes) = &release.notes {
        out.push_str(&format!("releaseNotes: {}\n", yaml_str(notes)));
    }
    if let Some(min) = &release.minimum_system_version {
        out.push_str(&format!("minimumSystemVersion: {}\n", yaml_str(min)));
    }
    out
}

/// XML's five escapes (text and attribute values); characters XML 1.0 forbids are dropped.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// One item of an appcast: a release with its macOS archive.
pub struct AppcastItem<'a> {
    pub release: &'a Release,
    pub enclosure: Listed<'a>,
}

/// Sparkle's appcast of `items` (newest first) for the product `title`: one `<item>` per
/// release with `sparkle:version` (the build), `sparkle:shortVersionString`,
/// `sparkle:channel` on releases that are not stable, `sparkle:minimumSystemVersion`, the
/// notes as the description and the enclosure with its length and `sparkle:edSignature`.
pub fn appcast(title: &str, items: &[AppcastItem<'_>]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<rss version=\"2.0\" xmlns:sparkle=\"http://www.andymatuschak.org/xml-namespaces/sparkle\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n  <channel>\n",
    );
    out.push_str(&format!("    <title>{}</title>\n", xml(title)));
    for item in items {
        let r = item.release;
        out.push_str("    <item>\n");
        out.push_str(&format!("      <title>{}</title>\n", xml(&r.version)));
        if let Some(at) = r.published_at {
            out.push_str(&format!("      <pubDate>{}</pubDate>\n", at.to_rfc2822()));
        }
        out.push_str(&format!(
            "      <sparkle:version>{}</sparkle:version>\n      <sparkle:shortVersionString>{}</sparkle:shortVersionString>\n",
            xml(r.build_number()),
            xml(&r.version)
        ));
        if r.channel != Channel::Stable {
            out.push_str(&format!(
                "      <sparkle:channel>{}</sparkle:channel>\n",
                r.channel.as_str()
            ));
        }
        if let Some(min) = &r.minimum_system_version {
            out.push_str(&format!(
                "      <sparkle:minimumSystemVersion>{}</sparkle:minimumSystemVersion>\n",
                xml(min)
            ));
        }
        if let Some(notes) = &r.notes {
            out.push_str(&format!(
                "      <description>{}</description>\n",
                xml(notes)
            ));
        }
        let a = item.enclosure.artifact;
        let signature = a
            .signatures
            .as_ref()
            .map(|s| STANDARD.encode(&s.ed25519))
            .unwrap_or_default();
        out.push_str(&format!(
            "      <enclosure url=\"{}\" length=\"{}\" type=\"application/octet-stream\" sparkle:edSignature=\"{}\"/>\n",
            xml(&item.enclosure.url),
            a.size,
            signature
        ));
        out.push_str("    </item>\n");
    }
    out.push_str("  </channel>\n</rss>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{FileId, OrganizationId, ProductId, ReleaseId};
    use crate::domain::release::{ArtifactSignatures, Bundle, ReleaseStatus};
    use chrono::TimeZone;

    fn release(notes: &str, channel: Channel) -> Release {
        let at = chrono::Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap();
        Release {
            id: ReleaseId::new(),
            organization_id: OrganizationId::new(),
            product_id: ProductId::new(),
            version: "1.2.0".into(),
            channel,
            notes: Some(notes.into()),
            status: ReleaseStatus::Published,
            created_at: at,
            modified_at: None,
            published_at: Some(at),
            yanked_at: None,
            backdated_to: None,
            required_benefits: Vec::new(),
            minimum_system_version: Some("11.0".into()),
            build: Some("120".into()),
            artifacts: vec![ReleaseArtifact {
                platform: "darwin-universal".into(),
                bundle: Bundle::Zip,
                file_id: FileId::new(),
                name: "My\"App<1.2>.zip".into(),
                size: 1234,
                sha512: vec![0xAB; 64],
                signatures: Some(ArtifactSignatures {
                    minisign: String::new(),
                    ed25519: vec![1; 64],
                }),
            }],
        }
    }

    #[test]
    fn the_yaml_quotes_every_value() {
        let r = release(
            "Fixes: \"quotes\"\n- and lists\nkey: value",
            Channel::Stable,
        );
        let files = [Listed {
            artifact: &r.artifacts[0],
            url: "https://x/dl/My%22App.zip?key=1&signature=a:b".into(),
        }];
        let yaml = electron_yaml(&r, &files);
        assert_eq!(
            yaml,
            format!(
                "version: \"1.2.0\"\nfiles:\n  - url: \"https://x/dl/My%22App.zip?key=1&signature=a:b\"\n    sha512: \"{sha}\"\n    size: 1234\npath: \"https://x/dl/My%22App.zip?key=1&signature=a:b\"\nsha512: \"{sha}\"\nreleaseDate: \"2026-11-01T12:00:00.000Z\"\nreleaseName: \"1.2.0\"\nreleaseNotes: \"Fixes: \\\"quotes\\\"\\n- and lists\\nkey: value\"\nminimumSystemVersion: \"11.0\"\n",
                sha = STANDARD.encode([0xAB; 64])
            )
        );
    }

    #[test]
    fn the_appcast_escapes_text_and_tags_channels() {
        let beta = release("<script>alert(1)</script> & more", Channel::Beta);
        let stable = release("ok", Channel::Stable);
        let items = [
            AppcastItem {
                release: &beta,
                enclosure: Listed {
                    artifact: &beta.artifacts[0],
                    url: "https://x/a?k=1&s=\"2\"".into(),
                },
            },
            AppcastItem {
                release: &stable,
                enclosure: Listed {
                    artifact: &stable.artifacts[0],
                    url: "https://x/b".into(),
                },
            },
        ];
        let xml_text = appcast("My <App>", &items);
        assert!(xml_text.contains("<title>My &lt;App&gt;</title>"));
        assert!(xml_text.contains(
            "<description>&lt;script&gt;alert(1)&lt;/script&gt; &amp; more</description>"
        ));
        assert!(xml_text.contains("url=\"https://x/a?k=1&amp;s=&quot;2&quot;\""));
        assert_eq!(
            xml_text
                .matches("<sparkle:channel>beta</sparkle:channel>")
                .count(),
            1
        );
        assert_eq!(xml_text.matches("<sparkle:channel>").count(), 1);
        assert!(xml_text.contains("<sparkle:version>120</sparkle:version>"));
        assert!(xml_text.contains("<pubDate>Sun, 1 Nov 2026 12:00:00 +0000</pubDate>"));
        assert!(xml_text.contains(&format!(
            "length=\"1234\" type=\"application/octet-stream\" sparkle:edSignature=\"{}\"",
            STANDARD.encode([1u8; 64])
        )));
        assert_eq!(xml("a\u{1}b"), "ab");
    }
}
