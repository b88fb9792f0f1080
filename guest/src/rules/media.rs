//! Which files are media, and of what type: the images and documents `read_media` returns,
//! told by the signature each format puts at the start of a file, never by the name alone.
//! A name only says what a file claims to be, so that a refusal can say what it found
//! instead (text named `.png`).

/// A type `read_media` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaType {
    Png,
    Jpeg,
    Gif,
    Webp,
    Pdf,
}

/// Names people give each type, by extension (compared in ASCII lowercase).
const EXTENSIONS: &[(&str, MediaType)] = &[
    ("apng", MediaType::Png),
    ("gif", MediaType::Gif),
    ("jfif", MediaType::Jpeg),
    ("jpe", MediaType::Jpeg),
    ("jpeg", MediaType::Jpeg),
    ("jpg", MediaType::Jpeg),
    ("pdf", MediaType::Pdf),
    ("png", MediaType::Png),
    ("webp", MediaType::Webp),
];

impl MediaType {
    /// The MIME type, as the result and MCP content carry it.
    pub fn mime(self) -> &'static str {
        match self {
            MediaType::Png => "image/png",
            MediaType::Jpeg => "image/jpeg",
            MediaType::Gif => "image/gif",
            MediaType::Webp => "image/webp",
            MediaType::Pdf => "application/pdf",
        }
    }

    /// Its name in a sentence (`PNG image`).
    pub fn label(self) -> &'static str {
        match self {
            MediaType::Png => "PNG image",
            MediaType::Jpeg => "JPEG image",
            MediaType::Gif => "GIF image",
            MediaType::Webp => "WebP image",
            MediaType::Pdf => "PDF document",
        }
    }

    /// The type whose signature `content` starts with: PNG's eight-byte signature, JPEG's
    /// start-of-image marker and the first byte of a segment, `GIF87a` or `GIF89a`, a RIFF
    /// container of form `WEBP`, or a PDF header (`%PDF-`).
    pub fn of_content(content: &[u8]) -> Option<MediaType> {
        if content.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(MediaType::Png)
        } else if content.starts_with(b"\xFF\xD8\xFF") {
            Some(MediaType::Jpeg)
        } else if content.starts_with(b"GIF87a") || content.starts_with(b"GIF89a") {
            Some(MediaType::Gif)
        } else if content.len() >= 12 && content.starts_with(b"RIFF") && &content[8..12] == b"WEBP"
        {
            Some(MediaType::Webp)
        } else if content.starts_with(b"%PDF-") {
            Some(MediaType::Pdf)
        } else {
            None
        }
    }

    /// The type a file name claims by its extension, if any.
    pub fn claimed_by(name: &str) -> Option<MediaType> {
        let ext = extension(name)?;
        EXTENSIONS
            .iter()
            .find(|(e, _)| ext.eq_ignore_ascii_case(e))
            .map(|(_, t)| *t)
    }
}

/// Whether the name is an SVG image's (`.svg`, `.svgz`), which is XML text.
pub fn is_svg_name(name: &str) -> bool {
    extension(name).is_some_and(|e| e.eq_ignore_ascii_case("svg") || e.eq_ignore_ascii_case("svgz"))
}

fn extension(name: &str) -> Option<&str> {
    match name.rfind('.') {
        Some(0) | None => None,
        Some(i) => Some(&name[i + 1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_decide_the_type() {
        let webp = b"RIFF\x24\0\0\0WEBPVP8 ";
        for (content, want) in [
            (&b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"[..], Some(MediaType::Png)),
            (b"\xFF\xD8\xFF\xE0\0\x10JFIF", Some(MediaType::Jpeg)),
            (b"GIF89a\x01\0", Some(MediaType::Gif)),
            (b"GIF87a\x01\0", Some(MediaType::Gif)),
            (webp, Some(MediaType::Webp)),
            (b"%PDF-1.7\n", Some(MediaType::Pdf)),
            // Near misses: a PNG signature without its line-ending bytes (what a text-mode
            // transfer leaves), a RIFF that is a WAV, a GIF of no known version, text.
            (b"\x89PNG\n\x1a\n", None),
            (b"RIFF\x24\0\0\0WAVEfmt ", None),
            (b"RIFFWEBP", None),
            (b"GIF90a", None),
            (b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>", None),
            (b"", None),
        ] {
            assert_eq!(MediaType::of_content(content), want, "{content:?}");
        }
        assert_eq!(MediaType::Webp.mime(), "image/webp");
        assert_eq!(MediaType::Pdf.mime(), "application/pdf");
    }

    #[test]
    fn names_only_claim() {
        assert_eq!(MediaType::claimed_by("a/Logo.PNG"), Some(MediaType::Png));
        assert_eq!(MediaType::claimed_by("photo.jpeg"), Some(MediaType::Jpeg));
        assert_eq!(MediaType::claimed_by("doc.pdf"), Some(MediaType::Pdf));
        assert_eq!(MediaType::claimed_by("data.dat"), None);
        assert_eq!(MediaType::claimed_by(".png"), None);
        assert_eq!(MediaType::claimed_by("png"), None);
        assert!(is_svg_name("icons/Arrow.SVG"));
        assert!(!is_svg_name("svg"));
    }
}
