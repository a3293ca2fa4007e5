// The output formats, one line each, in the order the CLI writes them: ATTNPROF_FORMAT(row)
// names the `extern const OutputFormat row` that the format's own file defines. formats.cpp
// expands the list twice, once to declare the rows and once to register them, so a new format
// is its file plus its line here (docs/architecture.md, "How to add an output format").
ATTNPROF_FORMAT(kJsonFormat)
ATTNPROF_FORMAT(kTextFormat)
ATTNPROF_FORMAT(kMarkdownFormat)
ATTNPROF_FORMAT(kHtmlFormat)
ATTNPROF_FORMAT(kCsvFormat)
ATTNPROF_FORMAT(kChromeFormat)
ATTNPROF_FORMAT(kTensorBoardFormat)
