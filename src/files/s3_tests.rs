use super::*;
use crate::domain::ids::{FileId, OrganizationId};

fn settings() -> S3Settings {
    S3Settings {
        endpoint: "http://127.0.0.1:9".into(),
        bucket: "tollgate-files".into(),
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
        allow_http: true,
        ..S3Settings::default()
    }
}

fn object() -> ObjectRef {
    ObjectRef {
        organization_id: OrganizationId::new(),
        file_id: FileId::new(),
        path: "downloadable/org/file/My App 1.0.dmg".into(),
        mime_type: "application/x-apple-diskimage".into(),
    }
}

fn query(url: &str) -> Vec<(String, String)> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn get<'a>(q: &'a [(String, String)], name: &str) -> Option<&'a str> {
    q.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

#[test]
fn a_part_url_is_presigned_for_its_part_and_upload_with_the_ttl() {
    let s3 = S3Files::new(&settings()).unwrap();
    let part = PartPlan {
        number: 3,
        start: 0,
        end: 10,
        sha256: None,
    };
    let expires = Utc::now() + chrono::Duration::seconds(3600);
    let url = s3.part_url(&object(), "upload-42", &part, expires).unwrap();
    assert!(
        url.url.starts_with(
            "http://127.0.0.1:9/tollgate-files/downloadable/org/file/My%20App%201.0.dmg?"
        ),
        "{}",
        url.url
    );
    let q = query(&url.url);
    assert_eq!(get(&q, "partNumber"), Some("3"));
    assert_eq!(get(&q, "uploadId"), Some("upload-42"));
    let ttl: i64 = get(&q, "X-Amz-Expires").unwrap().parse().unwrap();
    assert!((3590..=3600).contains(&ttl), "{ttl}");
    assert_eq!(get(&q, "X-Amz-SignedHeaders"), Some("host"));
    assert_eq!(get(&q, "X-Amz-Signature").map(str::len), Some(64));
    assert!(get(&q, "X-Amz-Credential")
        .unwrap()
        .starts_with("AKIDEXAMPLE/"));
    assert!(url.headers.is_empty());
}

#[test]
fn a_declared_part_checksum_is_answered_as_headers_and_signed() {
    let s3 = S3Files::new(&settings()).unwrap();
    let part = PartPlan {
        number: 1,
        start: 0,
        end: 10,
        sha256: Some([7u8; 32]),
    };
    let url = s3
        .part_url(
            &object(),
            "u",
            &part,
            Utc::now() + chrono::Duration::seconds(60),
        )
        .unwrap();
    let b64 = STANDARD.encode([7u8; 32]);
    assert_eq!(
        url.headers,
        vec![
            ("x-amz-checksum-sha256".to_string(), b64),
            (
                "x-amz-sdk-checksum-algorithm".to_string(),
                "SHA256".to_string()
            ),
        ]
    );
    let q = query(&url.url);
    assert_eq!(
        get(&q, "X-Amz-SignedHeaders"),
        Some("host;x-amz-checksum-sha256;x-amz-sdk-checksum-algorithm")
    );
}

#[test]
fn a_download_is_a_presigned_get_naming_the_file_and_its_type() {
    let s3 = S3Files::new(&settings()).unwrap();
    let download = DownloadAs {
        name: "Überblick \"1\".pdf".into(),
        mime_type: "application/pdf".into(),
        expires: Utc::now() + chrono::Duration::seconds(600),
    };
    let Delivery::Redirect(url) = s3
        .deliver(object(), download)
        .now_or_never()
        .unwrap()
        .unwrap()
    else {
        panic!("not a redirect")
    };
    let q = query(&url);
    assert_eq!(
        get(&q, "response-content-disposition"),
        Some(attachment("Überblick \"1\".pdf").as_str())
    );
    assert_eq!(get(&q, "response-content-type"), Some("application/pdf"));
    let ttl: i64 = get(&q, "X-Amz-Expires").unwrap().parse().unwrap();
    assert!((590..=600).contains(&ttl), "{ttl}");
    assert!(get(&q, "X-Amz-Signature").is_some());
}

#[test]
fn an_expiry_in_the_past_or_beyond_a_week_is_clamped_to_what_sigv4_takes() {
    let s3 = S3Files::new(&settings()).unwrap();
    let part = PartPlan {
        number: 1,
        start: 0,
        end: 1,
        sha256: None,
    };
    let past = s3
        .part_url(
            &object(),
            "u",
            &part,
            Utc::now() - chrono::Duration::seconds(5),
        )
        .unwrap();
    assert_eq!(get(&query(&past.url), "X-Amz-Expires"), Some("1"));
    let far = s3
        .part_url(
            &object(),
            "u",
            &part,
            Utc::now() + chrono::Duration::days(30),
        )
        .unwrap();
    assert_eq!(get(&query(&far.url), "X-Amz-Expires"), Some("604800"));
}

#[test]
fn virtual_hosted_style_puts_the_bucket_in_the_host() {
    let s3 = S3Files::new(&S3Settings {
        endpoint: "https://s3.eu-central-1.amazonaws.com".into(),
        path_style: false,
        allow_http: false,
        ..settings()
    })
    .unwrap();
    let part = PartPlan {
        number: 1,
        start: 0,
        end: 1,
        sha256: None,
    };
    let url = s3
        .part_url(
            &object(),
            "u",
            &part,
            Utc::now() + chrono::Duration::seconds(60),
        )
        .unwrap();
    assert!(
        url.url
            .starts_with("https://tollgate-files.s3.eu-central-1.amazonaws.com/downloadable/"),
        "{}",
        url.url
    );
}

#[test]
fn a_part_with_a_checksum_is_completed_with_it() {
    assert_eq!(part_id("abc", None).content_id, "abc");
    let id = part_id("a<b", Some(&[1u8; 32]));
    assert_eq!(
        id.content_id,
        format!(
            "<PartMetadata><e_tag>a&lt;b</e_tag><checksum_sha256>{}</checksum_sha256></PartMetadata>",
            STANDARD.encode([1u8; 32])
        )
    );
}

#[test]
fn the_stores_refusals_of_a_completion_are_told_apart() {
    assert_eq!(
        refusal("Client error with status 404: <Code>NoSuchUpload</Code>"),
        Some(Refusal::NoSuchUpload)
    );
    for code in [
        "InvalidPart",
        "InvalidPartOrder",
        "EntityTooSmall",
        "InvalidRequest",
    ] {
        assert_eq!(
            refusal(&format!("status 400: <Code>{code}</Code>")),
            Some(Refusal::Parts)
        );
    }
    assert_eq!(refusal("connection refused"), None);
}

#[test]
fn a_part_is_never_taken_by_tollgate() {
    let s3 = S3Files::new(&settings()).unwrap();
    let part = PartPlan {
        number: 1,
        start: 0,
        end: 1,
        sha256: None,
    };
    let o = object();
    let got = s3
        .receive_part(&o, &part, futures_util::stream::empty().boxed_local())
        .now_or_never()
        .unwrap();
    assert!(matches!(got, Err(PartRefused::Unsupported)));
}

#[test]
fn the_keys_never_reach_debug_output() {
    let text = format!("{:?}", settings());
    assert!(!text.contains("AKIDEXAMPLE"), "{text}");
    assert!(!text.contains("wJalr"), "{text}");
    assert!(text.contains("<redacted>"), "{text}");
}
