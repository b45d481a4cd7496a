package expr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// SyntaxError is returned by Compile for malformed expressions. Pos is the
// 0-based byte offset in the source where the problem was found.
type SyntaxError struct {
	Pos int
	Msg string
	Src string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("expression syntax error at position %d: %s (in %q)", e.Pos, e.Msg, e.Src)
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tLong
	tDouble
	tString
	tIdent
	tNull
	tTypedArray // <LONG>, <DOUBLE>, <STRING>, ARRAY<...>; text holds the type name
	tOp         // operators and punctuation; text holds the operator
)

type token struct {
	kind tokKind
	pos  int
	text string // literal text, decoded string/identifier, or operator
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return "string literal"
	case tIdent:
		return fmt.Sprintf("identifier %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

type lexer struct {
	src string
	pos int
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (lx *lexer) errorf(pos int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Pos: pos, Msg: fmt.Sprintf(format, args...), Src: lx.src}
}

// next returns the next token following the lexical rules of Druid's Expr.g4.
func (lx *lexer) next() (token, error) {
	s := lx.src
	for lx.pos < len(s) && (s[lx.pos] == ' ' || s[lx.pos] == '\t' || s[lx.pos] == '\r' || s[lx.pos] == '\n') {
		lx.pos++
	}
	start := lx.pos
	if start >= len(s) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := s[start]
	switch {
	case isDigit(c):
		return lx.number()
	case isIdentStart(c):
		end := start
		for end < len(s) && isIdentPart(s[end]) {
			end++
		}
		word := s[start:end]
		if word == "ARRAY" && end < len(s) && s[end] == '<' {
			return lx.arrayType()
		}
		lx.pos = end
		switch word {
		case "null":
			return token{kind: tNull, pos: start, text: word}, nil
		case "NaN", "Infinity":
			return token{kind: tDouble, pos: start, text: word}, nil
		}
		return token{kind: tIdent, pos: start, text: word}, nil
	case c == '"':
		text, err := lx.quoted('"')
		if err != nil {
			return token{}, err
		}
		return token{kind: tIdent, pos: start, text: text}, nil
	case c == '\'':
		text, err := lx.quoted('\'')
		if err != nil {
			return token{}, err
		}
		return token{kind: tString, pos: start, text: text}, nil
	case c == '<':
		for _, name := range [...]string{"LONG", "DOUBLE", "STRING"} {
			if strings.HasPrefix(s[start+1:], name+">") {
				lx.pos = start + len(name) + 2
				return token{kind: tTypedArray, pos: start, text: name}, nil
			}
		}
	}
	for _, op := range [...]string{"<=", ">=", "==", "!=", "&&", "||", "->"} {
		if strings.HasPrefix(s[start:], op) {
			lx.pos += 2
			return token{kind: tOp, pos: start, text: op}, nil
		}
	}
	if strings.IndexByte("-!^*/%+<>(),[]", c) >= 0 {
		lx.pos++
		return token{kind: tOp, pos: start, text: s[start : start+1]}, nil
	}
	r, _ := utf8.DecodeRuneInString(s[start:])
	return token{}, lx.errorf(start, "unexpected character %q", r)
}

// number lexes LONG ([0-9]+) and DOUBLE (digits '.' digits? exp? | digits exp)
// where exp is [eE] '-'? digits.
func (lx *lexer) number() (token, error) {
	s := lx.src
	start := lx.pos
	i := start
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	isDouble := false
	if i < len(s) && s[i] == '.' {
		isDouble = true
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	// exponent only if well formed, otherwise the 'e' starts a new token
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && s[j] == '-' {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
			isDouble = true
		}
	}
	lx.pos = i
	if isDouble {
		return token{kind: tDouble, pos: start, text: s[start:i]}, nil
	}
	return token{kind: tLong, pos: start, text: s[start:i]}, nil
}

// arrayType lexes ARRAY<LONG>, ARRAY<DOUBLE>, ARRAY<STRING> (and nested
// ARRAY<ARRAY<..>> / COMPLEX forms, which are recognised but rejected).
func (lx *lexer) arrayType() (token, error) {
	s := lx.src
	start := lx.pos
	depth := 0
	i := start
	for i < len(s) {
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
		}
		i++
		if depth == 0 && s[i-1] == '>' {
			break
		}
	}
	if depth != 0 {
		return token{}, lx.errorf(start, "unterminated array type")
	}
	text := s[start:i]
	lx.pos = i
	inner := text[len("ARRAY<") : len(text)-1]
	switch inner {
	case "LONG", "DOUBLE", "STRING":
		return token{kind: tTypedArray, pos: start, text: inner}, nil
	}
	return token{}, lx.errorf(start, "unsupported array type %s", text)
}

// quoted lexes a quoted string or identifier with Java escapes
// (\' \" \\ \/ \b \f \n \r \t \uXXXX).
func (lx *lexer) quoted(q byte) (string, error) {
	s := lx.src
	start := lx.pos
	i := start + 1
	var sb strings.Builder
	plain := true
	var pendingHigh rune = -1
	flushHigh := func() {
		if pendingHigh >= 0 {
			sb.WriteRune(utf8.RuneError)
			pendingHigh = -1
		}
	}
	for i < len(s) {
		c := s[i]
		if c == q {
			lx.pos = i + 1
			if plain {
				return s[start+1 : i], nil
			}
			flushHigh()
			return sb.String(), nil
		}
		if c != '\\' {
			if plain {
				i++
				continue
			}
			flushHigh()
			sb.WriteByte(c)
			i++
			continue
		}
		if plain {
			plain = false
			sb.WriteString(s[start+1 : i])
		}
		if i+1 >= len(s) {
			break
		}
		e := s[i+1]
		i += 2
		var r rune
		switch e {
		case '\'', '"', '\\', '/':
			r = rune(e)
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			if i+4 > len(s) {
				return "", lx.errorf(i-2, "bad unicode escape")
			}
			v, err := strconv.ParseUint(s[i:i+4], 16, 16)
			if err != nil {
				return "", lx.errorf(i-2, "bad unicode escape")
			}
			i += 4
			r = rune(v)
			// Java strings are UTF-16: join surrogate pairs written as two escapes.
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 {
					flushHigh()
					pendingHigh = r
					continue
				}
				if pendingHigh >= 0 {
					sb.WriteRune(utf16.DecodeRune(pendingHigh, r))
					pendingHigh = -1
					continue
				}
				r = utf8.RuneError
			}
		default:
			return "", lx.errorf(i-2, "invalid escape sequence \\%c", e)
		}
		flushHigh()
		sb.WriteRune(r)
	}
	if q == '"' {
		return "", lx.errorf(start, "unterminated quoted identifier")
	}
	return "", lx.errorf(start, "unterminated string literal")
}
