use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use ed25519_dalek::Verifier;

use super::*;

fn signer() -> Arc<Signer> {
    let (seed, public, kid) = Signer::generate();
    let s = Signer::from_seed(kid, &seed).expect("32 bytes");
    assert_eq!(s.public_key(), public);
    Arc::new(s)
}

fn header<'a>(res: &'a HttpResponse, name: &str) -> &'a str {
    res.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

#[test]
fn no_header_asks_for_nothing_and_a_bad_one_is_a_400() {
    let req = TestRequest::post().to_http_request();
    assert_eq!(requested(&req).ok(), Some(Vec::new()));
    for bad in [
        "sig1=\"@status\"",
        "sig1=(\"@status\");alg=\"rsa-pss-sha512\"",
        "sig1=(\"@target-uri\";req)",
        "sig1=(\"@method\")",
        "sig1=(\"x-missing\";req)",
        "sig1=(\"@status\";bs)",
        "sig1=(\"@status\");nonce=12",
        "a=(), b=(), c=(), d=(), e=()",
        "((",
    ] {
        let req = TestRequest::post()
            .insert_header(("accept-signature", bad))
            .to_http_request();
        assert!(
            matches!(requested(&req), Err(ApiError::BadRequest(_))),
            "{bad} accepted"
        );
    }
}

#[test]
fn a_signed_answer_verifies_with_the_public_key_and_covers_what_was_asked() {
    let req = TestRequest::post()
        .uri("/v1/customer-portal/license-keys/validate?x=1")
        .insert_header(("host", "Tollgate.Example"))
        .insert_header(("x-app", "demo"))
        .insert_header((
            "accept-signature",
            "mine=(\"@query\";req \"x-app\";req \"@authority\";req);nonce=\"n\\\"1\";tag=\"app\"",
        ))
        .to_http_request();
    let wanted = requested(&req).expect("a valid request");
    let signer = signer();
    let signing = Signing::new(signer.clone(), wanted, 1_700_000_000);
    let res = HttpResponse::Ok()
        .content_type("application/json")
        .body(r#"{"status":"granted"}"#);
    let res = signing.sign(&req, res);
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        header(&res, "content-digest"),
        "sha-256=:WfZ3ExdpUKYFQAsOaeUJfOVcRLlegFJGmCdm28EOWyA=:"
    );
    let params = format!(
        "(\"@query\";req \"x-app\";req \"@authority\";req \"@status\" \"content-digest\" \
         \"@method\";req \"@path\";req);created=1700000000;keyid=\"{}\";alg=\"ed25519\";\
         nonce=\"n\\\"1\";tag=\"app\"",
        signer.kid
    );
    assert_eq!(header(&res, "signature-input"), format!("mine={params}"));
    let base = format!(
        "\"@query\";req: ?x=1\n\"x-app\";req: demo\n\"@authority\";req: tollgate.example\n\
         \"@status\": 200\n\"content-digest\": sha-256=:WfZ3ExdpUKYFQAsOaeUJfOVcRLlegFJGmCdm28EOWyA=:\n\
         \"@method\";req: POST\n\"@path\";req: /v1/customer-portal/license-keys/validate\n\
         \"@signature-params\": {params}"
    );
    let sig = header(&res, "signature");
    let b64 = sig
        .strip_prefix("mine=:")
        .and_then(|s| s.strip_suffix(':'))
        .expect("a byte sequence");
    let bytes: [u8; 64] = STANDARD
        .decode(b64)
        .expect("base64")
        .try_into()
        .expect("64 bytes");
    let public = ed25519_dalek::VerifyingKey::from_bytes(&signer.public_key()).expect("a key");
    let signature = ed25519_dalek::Signature::from_bytes(&bytes);
    assert!(public.verify(base.as_bytes(), &signature).is_ok());
    // Another status or body, and the signature no longer holds.
    assert!(public
        .verify(base.replace("200", "404").as_bytes(), &signature)
        .is_err());
}

#[test]
fn unasked_signatures_cover_the_mandatory_components_and_a_204_has_an_empty_digest() {
    let req = TestRequest::post()
        .uri("/v1/customer-portal/license-keys/deactivate")
        .to_http_request();
    let signing = Signing::new(signer(), Vec::new(), 1);
    let res = signing.sign(&req, HttpResponse::NoContent().finish());
    assert_eq!(
        header(&res, "content-digest"),
        "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:"
    );
    assert!(header(&res, "signature-input").starts_with(
        "sig1=(\"@status\" \"content-digest\" \"@method\";req \"@path\";req);created=1;"
    ));
    assert!(header(&res, "signature").starts_with("sig1=:"));
}

#[test]
fn the_key_id_is_the_rfc_7638_thumbprint() {
    // RFC 8037 appendix A.3: the thumbprint of its example Ed25519 key.
    let x = URL_SAFE_NO_PAD
        .decode("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
        .expect("base64url");
    let public: [u8; 32] = x.try_into().expect("32 bytes");
    assert_eq!(
        thumbprint(&public),
        "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    );
}
