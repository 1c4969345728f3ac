// Writes ScenarioIndex.swift: `allScenarios`, every top-level `let name = Scenario(` of the
// given files. Files named after a scenario ID (`PAIR-006-supersession.swift`) must declare
// exactly one scenario with that ID; other files (helpers) may declare none.
//
// Usage: ScenarioIndexGenerator --output FILE [--access public|package|internal]
//        [--import MODULE]... SWIFT_FILE...
import Foundation

struct Declaration {
    var name: String
    var id: String?
    var file: String
    var line: Int
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

var output: String?
var access = "public"
var files: [String] = []
var imports: [String] = []
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--output": output = arguments.next()
    case "--access": access = arguments.next() ?? access
    case "--import": if let module = arguments.next() { imports.append(module) }
    default: files.append(argument)
    }
}
guard let output else { fail("error: ScenarioIndexGenerator: --output FILE is required") }
guard access == "public" || access == "internal" || access == "package" else {
    fail("error: ScenarioIndexGenerator: --access must be public, package or internal")
}

/// `AREA-NNN` (or a user ID, `X-OWNER-NNN`) at the start of a file name, if any.
func scenarioID(inFileName name: String) -> String? {
    let characters = Array(name)
    var index = 0
    if name.hasPrefix("X-") {
        // X-OWNER-NNN: the owner is upper-case letters or digits.
        index = 2
        while index < characters.count, characters[index].isASCII, characters[index].isUppercase || characters[index].isNumber {
            index += 1
        }
        guard index > 2 else { return nil }
    } else {
        while index < characters.count, characters[index].isUppercase, characters[index].isASCII { index += 1 }
        guard index > 0 else { return nil }
    }
    guard index < characters.count, characters[index] == "-" else { return nil }
    let digits = characters[(index + 1)...].prefix { $0.isASCII && $0.isNumber }
    guard digits.count == 3 else { return nil }
    return String(characters[0..<(index + 1 + 3)])
}

func isIdentifier(_ text: Substring) -> Bool {
    guard let first = text.first, first == "_" || first.isLetter else { return false }
    return text.allSatisfy { $0 == "_" || $0.isLetter || $0.isNumber }
}

/// Parses `[access] let NAME [: Scenario] = Scenario(` at column 0.
func declaredName(_ line: Substring) -> String? {
    var rest = line
    for modifier in ["public ", "package ", "internal "] where rest.hasPrefix(modifier) {
        rest = rest.dropFirst(modifier.count)
    }
    guard rest.hasPrefix("let ") else { return nil }
    rest = rest.dropFirst(4).drop { $0 == " " }
    let name = rest.prefix { $0 == "_" || $0.isLetter || $0.isNumber }
    guard isIdentifier(name) else { return nil }
    rest = rest.dropFirst(name.count).drop { $0 == " " }
    if rest.hasPrefix(":") {
        rest = rest.dropFirst().drop { $0 == " " }
        guard rest.hasPrefix("Scenario") else { return nil }
        rest = rest.dropFirst("Scenario".count).drop { $0 == " " }
    }
    guard rest.hasPrefix("=") else { return nil }
    rest = rest.dropFirst().drop { $0 == " " }
    guard rest.hasPrefix("Scenario(") || rest.hasPrefix("Scenario.init(") else { return nil }
    return String(name)
}

/// The first string literal in `text`, if any.
func firstStringLiteral(_ text: Substring) -> String? {
    guard let open = text.firstIndex(of: "\"") else { return nil }
    let after = text[text.index(after: open)...]
    guard let close = after.firstIndex(of: "\"") else { return nil }
    return String(after[..<close])
}

var declarations: [Declaration] = []
var problems: [String] = []
for file in files.sorted() {
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
        problems.append("\(file):1: error: cannot read the file")
        continue
    }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    var found: [Declaration] = []
    for (index, line) in lines.enumerated() {
        guard let name = declaredName(line) else { continue }
        // The ID is the first string literal after `Scenario(`, on this line or the next few.
        let window = lines[index..<min(lines.count, index + 4)].joined(separator: "\n")
        let afterCall = window[(window.range(of: "Scenario")?.upperBound ?? window.startIndex)...]
        found.append(Declaration(name: name, id: firstStringLiteral(afterCall), file: file, line: index + 1))
    }
    let fileName = URL(fileURLWithPath: file).lastPathComponent
    if let expected = scenarioID(inFileName: fileName) {
        if found.count != 1 {
            problems.append("\(file):1: error: a scenario file must declare exactly one top-level `let name = Scenario(\"\(expected)\", ...)`; found \(found.count)")
        } else if let id = found[0].id, id != expected {
            problems.append("\(file):\(found[0].line): error: the file is named after \(expected) but declares \(id)")
        }
    }
    declarations += found
}

var seenNames: [String: Declaration] = [:]
var seenIDs: [String: Declaration] = [:]
for declaration in declarations {
    if let other = seenNames[declaration.name] {
        problems.append("\(declaration.file):\(declaration.line): error: `\(declaration.name)` is also declared at \(other.file):\(other.line)")
    }
    seenNames[declaration.name] = declaration
    if let id = declaration.id {
        if let other = seenIDs[id] {
            problems.append("\(declaration.file):\(declaration.line): error: scenario \(id) is also declared at \(other.file):\(other.line)")
        }
        seenIDs[id] = declaration
    }
}
guard problems.isEmpty else { fail(problems.joined(separator: "\n")) }

var source = "// Generated by ScenarioIndexGenerator from the target's Swift files. Do not edit.\n\n"
for module in imports { source += "import \(module)\n" }
if !imports.isEmpty { source += "\n" }
source += "/// Every scenario declared in this target, in file order.\n"
source += "\(access == "internal" ? "" : access + " ")let allScenarios: [Scenario] = [\n"
for declaration in declarations { source += "    \(declaration.name),\n" }
source += "]\n"

do {
    try FileManager.default.createDirectory(
        at: URL(fileURLWithPath: output).deletingLastPathComponent(), withIntermediateDirectories: true)
    try source.write(toFile: output, atomically: true, encoding: .utf8)
} catch {
    fail("error: ScenarioIndexGenerator: cannot write \(output): \(error)")
}
