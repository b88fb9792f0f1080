//! Carrying the file's own indentation into lines a relaxed match replaces: the model's
//! `old_text` matched the file only with whitespace folded (spaces where the file has tabs,
//! another indent width), so its `new_text` is indented the model's way too. Each new line
//! gets the file's indentation for the same depth: an indentation seen on a matched line
//! maps to the file's text for that line; any other is placed by its depth relative to the
//! first matched line, in the file's style (tabs stay tabs) and indent width.

/// Columns a tab counts on the model's side, where it has to be compared with spaces.
const TAB_COLUMNS: usize = 4;

/// How the model's indentation maps onto the file's, learned from the matched lines.
#[derive(Debug, Clone)]
pub struct Indent {
    /// (model's indentation, file's indentation) of each matched non-blank line pair.
    pairs: Vec<(String, String)>,
    /// The model's indentation of its first non-blank old line, in columns.
    old_base: usize,
    /// The file's indentation of the line matched with it.
    file_base: String,
    /// The model's indent width in columns.
    old_unit: usize,
    /// One level of the file's indentation (`"\t"` or a run of spaces).
    file_unit: String,
}

fn leading(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

fn columns(ws: &str) -> usize {
    ws.chars()
        .map(|c| if c == '\t' { TAB_COLUMNS } else { 1 })
        .sum()
}

/// The smallest positive difference between the widths, the indent width they show.
fn unit(widths: &[usize]) -> Option<usize> {
    let mut w: Vec<usize> = widths.to_vec();
    w.sort_unstable();
    w.dedup();
    w.windows(2).map(|p| p[1] - p[0]).filter(|d| *d > 0).min()
}

impl Indent {
    /// Learns the mapping from the file's lines `found` that the model's `old` lines matched.
    pub fn learn(found: &[String], old: &[String]) -> Indent {
        let pairs: Vec<(String, String)> = old
            .iter()
            .zip(found)
            .filter(|(o, f)| !o.trim().is_empty() && !f.trim().is_empty())
            .map(|(o, f)| (leading(o).to_string(), leading(f).to_string()))
            .collect();
        let (old_base, file_base) = pairs
            .first()
            .map_or((0, String::new()), |(o, f)| (columns(o), f.clone()));
        let old_widths: Vec<usize> = pairs.iter().map(|(o, _)| columns(o)).collect();
        let old_unit = unit(&old_widths).unwrap_or(TAB_COLUMNS);
        let file_tabs = pairs.iter().any(|(_, f)| f.contains('\t'));
        let file_unit = if file_tabs {
            "\t".to_string()
        } else {
            let widths: Vec<usize> = pairs.iter().map(|(_, f)| f.len()).collect();
            " ".repeat(unit(&widths).unwrap_or(old_unit))
        };
        Indent {
            pairs,
            old_base,
            file_base,
            old_unit,
            file_unit,
        }
    }

    /// `line` (one of the model's new lines) with the file's indentation for its depth.
    pub fn apply(&self, line: &str) -> String {
        let ws = leading(line);
        let rest = &line[ws.len()..];
        if rest.trim().is_empty() {
            return line.to_string();
        }
        if let Some((_, f)) = self.pairs.iter().find(|(o, _)| o == ws) {
            return format!("{f}{rest}");
        }
        let depth = (columns(ws) as isize - self.old_base as isize) / self.old_unit as isize;
        let mut out = self.file_base.clone();
        if depth >= 0 {
            for _ in 0..depth {
                out.push_str(&self.file_unit);
            }
        } else {
            for _ in 0..depth.unsigned_abs() {
                match out.strip_suffix(self.file_unit.as_str()) {
                    Some(s) => out.truncate(s.len()),
                    None => out.clear(),
                }
            }
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn spaces_from_the_model_become_the_files_tabs() {
        let found = v(&["\tif x {\n", "\t\treturn 1;\n", "\t}\n"]);
        let old = v(&["    if x {\n", "        return 1;\n", "    }\n"]);
        let i = Indent::learn(&found, &old);
        assert_eq!(i.apply("        return 2;\n"), "\t\treturn 2;\n");
        // A depth no matched line had: placed by the model's indent width.
        assert_eq!(i.apply("            deeper();\n"), "\t\t\tdeeper();\n");
        assert_eq!(i.apply("outside();\n"), "outside();\n");
        assert_eq!(i.apply("\n"), "\n");
    }

    #[test]
    fn another_indent_width_is_carried_over() {
        let found = v(&["  a {\n", "    b;\n", "  }\n"]);
        let old = v(&["\ta {\n", "\t\tb;\n", "\t}\n"]);
        let i = Indent::learn(&found, &old);
        assert_eq!(i.apply("\t\tc;\n"), "    c;\n");
        assert_eq!(i.apply("\t\t\td;\n"), "      d;\n");
    }

    #[test]
    fn the_same_style_is_left_as_it_is() {
        let found = v(&["    x = 1\n"]);
        let i = Indent::learn(&found, &found);
        assert_eq!(i.apply("    y = 2\n"), "    y = 2\n");
        assert_eq!(i.apply("        z = 3\n"), "        z = 3\n");
    }
}
