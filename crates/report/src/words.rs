//! Counted nouns and short lists, as every message of passk words them.

/// "1 problem", "2 problems".
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The verb form that agrees with `count`: `agree(1, "has", "have")` is "has".
pub fn agree<'a>(count: usize, one: &'a str, many: &'a str) -> &'a str {
    if count == 1 {
        one
    } else {
        many
    }
}

/// The first `shown` of `items`, then how many more: "a, b, c and 4 more".
pub fn first_few<S: AsRef<str>>(items: &[S], shown: usize) -> String {
    let named: Vec<&str> = items.iter().take(shown).map(AsRef::as_ref).collect();
    let mut text = named.join(", ");
    if items.len() > shown {
        text.push_str(&format!(" and {} more", items.len() - shown));
    }
    text
}
