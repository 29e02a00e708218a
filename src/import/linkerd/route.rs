//! A route's `condition` and `responseClasses`: checked as `Validate` and
//! the controller's `toRoute` check them, and read as the proxy classifies
//! each of herdsim's answers (`ResponseMatch::is_match`), which says what
//! is retried.

use super::go_duration;
use crate::import::tree::Node;
use crate::import::{Context, ImportError};

/// Checks a route as `Validate` and the controller's `toRoute` do.
pub(super) fn check_route(ctx: &Context<'_>, route: &Node<'_>) -> Result<(), ImportError> {
    route.only(
        ctx,
        &[
            "name",
            "condition",
            "responseClasses",
            "isRetryable",
            "timeout",
        ],
    )?;
    match route.get("name") {
        Some(name) if !name.str(ctx)?.is_empty() => {}
        _ => return Err(ctx.error(route, "no name: a route needs one")),
    }
    let condition = route
        .get("condition")
        .ok_or_else(|| ctx.error(route, "no condition: a route needs one"))?;
    check_request_match(ctx, &condition)?;
    if let Some(node) = route.get("isRetryable") {
        node.bool(ctx, false)?;
    }
    if let Some(node) = route.get("timeout") {
        go_duration(ctx, &node)?;
    }
    if let Some(classes) = route.get("responseClasses") {
        for class in classes.items(ctx)? {
            class.only(ctx, &["condition", "isFailure"])?;
            let condition = class
                .get("condition")
                .ok_or_else(|| ctx.error(&class, "no condition: a response class needs one"))?;
            check_response_match(ctx, &condition)?;
            if let Some(node) = class.get("isFailure") {
                node.bool(ctx, false)?;
            }
        }
    }
    Ok(())
}

/// `ValidateRequestMatch`: at least one of its fields, children valid.
fn check_request_match(ctx: &Context<'_>, node: &Node<'_>) -> Result<(), ImportError> {
    let known = ["all", "any", "not", "pathRegex", "method"];
    node.only(ctx, &known)?;
    let mut set = false;
    for key in ["all", "any"] {
        if let Some(list) = node.get(key) {
            set = true;
            for child in list.items(ctx)? {
                check_request_match(ctx, &child)?;
            }
        }
    }
    if let Some(not) = node.get("not") {
        set = true;
        check_request_match(ctx, &not)?;
    }
    for key in ["pathRegex", "method"] {
        if let Some(text) = node.get(key)
            && !text.str(ctx)?.is_empty()
        {
            set = true;
        }
    }
    if set {
        Ok(())
    } else {
        Err(ctx.error(
            node,
            format!("a request match needs one of {}", known.join(", ")),
        ))
    }
}

/// `ValidateResponseMatch`: at least one field; a status bound, if given,
/// 100 to 599, and max not below min.
fn check_response_match(ctx: &Context<'_>, node: &Node<'_>) -> Result<(), ImportError> {
    let known = ["all", "any", "not", "status"];
    node.only(ctx, &known)?;
    let mut set = false;
    for key in ["all", "any"] {
        if let Some(list) = node.get(key) {
            set = true;
            for child in list.items(ctx)? {
                check_response_match(ctx, &child)?;
            }
        }
    }
    if let Some(not) = node.get("not") {
        set = true;
        check_response_match(ctx, &not)?;
    }
    if let Some(status) = node.get("status") {
        set = true;
        status.only(ctx, &["min", "max"])?;
        let bound = |key: &str| -> Result<u64, ImportError> {
            match status.get(key) {
                None => Ok(0),
                Some(b) => {
                    let n = b.u64(ctx, false)?;
                    if n != 0 && !(100..=599).contains(&n) {
                        return Err(ctx.error(&b, format!("{n}: expected 100 to 599")));
                    }
                    Ok(n)
                }
            }
        };
        let (min, max) = (bound("min")?, bound("max")?);
        if min != 0 && max != 0 && max < min {
            return Err(ctx.error(&status, "max is below min"));
        }
    }
    if set {
        Ok(())
    } else {
        Err(ctx.error(
            node,
            format!("a response match needs one of {}", known.join(", ")),
        ))
    }
}

/// A response condition as the proxy holds it (`None`: dropped).
enum Matcher {
    All(Vec<Matcher>),
    Any(Vec<Matcher>),
    Not(Box<Matcher>),
    Status(u64, u64),
}

impl Matcher {
    fn matches(&self, status: u64) -> bool {
        match self {
            Matcher::All(ms) => ms.iter().all(|m| m.matches(status)),
            Matcher::Any(ms) => ms.iter().any(|m| m.matches(status)),
            Matcher::Not(m) => !m.matches(status),
            Matcher::Status(min, max) => (*min..=*max).contains(&status),
        }
    }
}

/// The controller's `toResponseMatch` (several fields: all of them) and
/// the proxy's `convert_rsp_match` (a bound of 0 is no status code, and
/// drops what holds it). Already checked.
fn matcher(ctx: &Context<'_>, node: &Node<'_>) -> Option<Matcher> {
    let mut parts = Vec::new();
    for key in ["all", "any"] {
        if let Some(list) = node.get(key) {
            let children: Vec<Matcher> = list
                .items(ctx)
                .unwrap_or_default()
                .iter()
                .filter_map(|c| matcher(ctx, c))
                .collect();
            // `convert_rsp_match`: an empty all or any is dropped.
            parts.push((!children.is_empty()).then(|| {
                if key == "all" {
                    Matcher::All(children)
                } else {
                    Matcher::Any(children)
                }
            }));
        }
    }
    if let Some(status) = node.get("status") {
        let bound = |k: &str| status.get(k).and_then(|b| b.value().as_u64()).unwrap_or(0);
        let (min, max) = (bound("min"), bound("max"));
        parts.push(if min == 0 || max == 0 {
            ctx.warn(format!(
                "{}: {}: a status range without {}: the proxy drops it \
                 (StatusCode::from_u16(0) fails), and the condition holding it",
                ctx.file,
                status.path(),
                if min == 0 { "min" } else { "max" }
            ));
            None
        } else {
            Some(Matcher::Status(min, max))
        });
    }
    if let Some(not) = node.get("not") {
        parts.push(matcher(ctx, &not).map(|m| Matcher::Not(Box::new(m))));
    }
    if parts.len() == 1 {
        return parts.pop().flatten();
    }
    // Several fields: the controller sends All of them, and the proxy
    // drops the ones it cannot convert.
    let kept: Vec<Matcher> = parts.into_iter().flatten().collect();
    (!kept.is_empty()).then_some(Matcher::All(kept))
}

/// The HTTP statuses herdsim's server answers with.
pub(super) struct Statuses {
    pub(super) failure: u64,
    pub(super) rejected: u64,
}

pub(super) fn status_selection(ctx: &Context<'_>, kind: &str) -> Result<u64, ImportError> {
    match ctx.selection(kind) {
        None => Ok(503),
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|s| (400..600).contains(s))
            .ok_or_else(|| {
                ctx.error_at(
                    &format!("--select {kind}"),
                    "expected an HTTP error status, 400 to 599",
                )
            }),
    }
}

/// `retry_on` from the route's classes, each of herdsim's answers
/// classified as the proxy classifies it.
pub(super) fn retry_on(
    ctx: &Context<'_>,
    route: &Node<'_>,
    statuses: &Statuses,
) -> Result<(), ImportError> {
    let mut classes = Vec::new();
    if let Some(list) = route.get("responseClasses") {
        for class in list.items(ctx)? {
            let condition = class.get("condition").expect("checked");
            let failure = class
                .get("isFailure")
                .and_then(|n| n.value().as_bool())
                .unwrap_or(false);
            if let Some(m) = matcher(ctx, &condition) {
                classes.push((m, failure, class.path().to_string()));
            }
        }
    }
    // The first class matching decides; none, a 5xx is a failure.
    let is_failure = |status: u64| -> (bool, Option<&str>) {
        classes
            .iter()
            .find(|(m, _, _)| m.matches(status))
            .map_or((status >= 500, None), |(_, f, path)| {
                (*f, Some(path.as_str()))
            })
    };
    if let (true, Some(path)) = is_failure(200) {
        return Err(ctx.error_at(
            path,
            "not modelled: a class that makes a success (200) a failure: herdsim cannot retry \
             a success",
        ));
    }
    let (failure, _) = is_failure(statuses.failure);
    let (rejected, _) = is_failure(statuses.rejected);
    let value = match (failure, rejected) {
        (true, true) => "failure+rejected",
        (true, false) => "failure",
        (false, true) => "rejected",
        (false, false) => "none",
    };
    let from = match route.get("responseClasses") {
        Some(node) => node.path().to_string(),
        None => route.path().to_string() + ".responseClasses",
    };
    ctx.set(
        "retry_on",
        value,
        &[&from],
        format!(
            "a retryable route retries the responses its classes make failures (the first \
             class matching decides; none, a 5xx): herdsim's failure answers {} ({}), its \
             rejection {} ({}); a timeout is never retried (no response reaches the retry \
             policy); an HTTP upstream assumed",
            statuses.failure,
            if failure { "a failure" } else { "a success" },
            statuses.rejected,
            if rejected { "a failure" } else { "a success" },
        ),
    )
}

#[cfg(test)]
mod tests {
    use crate::import::linkerd::tests::{ROUTE, profile, read, read_with};

    #[test]
    fn response_classes_choose_what_is_retried() {
        let classes = |c: &str, select: &[(&str, &str)]| {
            read_with(
                &profile(&format!("{ROUTE}    responseClasses:\n{c}")),
                select,
            )
            .map(|g| g.value("retry_on").unwrap().to_string())
        };
        // 503 declared a success: nothing herdsim answers is retried.
        let ok503 = "    - condition: {status: {min: 503, max: 503}}\n      isFailure: false\n";
        assert_eq!(classes(ok503, &[]).unwrap(), "none");
        // ... unless the rejection is a 500.
        assert_eq!(
            classes(ok503, &[("rejected-status", "500")]).unwrap(),
            "rejected"
        );
        // 429 a failure by a class; 503 by the 5xx fallback.
        let c429 = "    - condition: {status: {min: 429, max: 429}}\n      isFailure: true\n";
        assert_eq!(
            classes(c429, &[("rejected-status", "429")]).unwrap(),
            "failure+rejected"
        );
        // The first class matching decides.
        let first = "    - condition: {not: {status: {min: 500, max: 502}}}\n      isFailure: \
                     false\n    - condition: {status: {min: 500, max: 599}}\n      isFailure: true\n";
        assert_eq!(classes(first, &[]).unwrap(), "none");
        assert_eq!(
            classes(first, &[("failure-status", "500")]).unwrap(),
            "failure"
        );
        // Several fields are all of them.
        let both = "    - condition: {status: {min: 500, max: 599}, not: {status: {min: 503, \
                    max: 503}}}\n      isFailure: false\n";
        assert_eq!(
            classes(both, &[("failure-status", "500")]).unwrap(),
            "rejected"
        );
        // A range missing a bound is dropped by the proxy: the 5xx rule.
        let half = "    - condition: {status: {min: 500}}\n      isFailure: false\n";
        let got = read(&profile(&format!("{ROUTE}    responseClasses:\n{half}"))).unwrap();
        assert_eq!(got.value("retry_on"), Some("failure+rejected"));
        assert!(
            got.warnings[0].contains("without max: the proxy drops it"),
            "{:?}",
            got.warnings
        );
        // A success made a failure is refused.
        let e = classes(
            "    - condition: {status: {min: 200, max: 299}}\n      isFailure: true\n",
            &[],
        )
        .unwrap_err();
        assert!(
            e.contains(
                "spec.routes[0].responseClasses[0]: not modelled: a class that makes a success"
            ),
            "{e}"
        );
    }
}
