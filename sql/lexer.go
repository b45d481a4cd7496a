package sql

import (
	"strings"
	"unicode/utf8"
)

// lexer splits SQL text into tokens, tracking line and column as it goes.
type lexer struct {
	src  string
	i    int // byte offset of the next rune
	line int
	col  int
}

// lex tokenizes src. The returned slice always ends with a tokEOF token.
func lex(src string) ([]token, error) {
	lx := &lexer{src: src, line: 1, col: 1}
	toks := make([]token, 0, len(src)/4+1)
	for {
		t, err := lx.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if t.kind == tokEOF {
			return toks, nil
		}
	}
}

func (lx *lexer) pos() Pos { return Pos{Line: lx.line, Column: lx.col, Offset: lx.i} }

// advance consumes one rune, updating line and column. "\r\n" counts as one line break.
func (lx *lexer) advance() rune {
	r, size := rune(lx.src[lx.i]), 1
	if r >= utf8.RuneSelf {
		r, size = utf8.DecodeRuneInString(lx.src[lx.i:])
	}
	lx.i += size
	switch {
	case r == '\n':
		lx.line++
		lx.col = 1
	case r == '\r':
		if lx.i < len(lx.src) && lx.src[lx.i] == '\n' {
			break // the '\n' ends the line
		}
		lx.line++
		lx.col = 1
	default:
		lx.col++
	}
	return r
}

func (lx *lexer) peekRune(off int) rune {
	j := lx.i + off
	if j >= len(lx.src) {
		return -1
	}
	r, _ := utf8.DecodeRuneInString(lx.src[j:])
	return r
}

func (lx *lexer) errAt(p Pos, msg string) error {
	return &Error{Line: p.Line, Column: p.Column, Offset: p.Offset, Msg: msg}
}

// skipSpace skips white space and comments.
func (lx *lexer) skipSpace() error {
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			lx.advance()
		case c == '-' && lx.peekRune(1) == '-':
			for lx.i < len(lx.src) && lx.src[lx.i] != '\n' && lx.src[lx.i] != '\r' {
				lx.advance()
			}
		case c == '/' && lx.peekRune(1) == '*':
			start := lx.pos()
			lx.advance()
			lx.advance()
			for {
				if lx.i >= len(lx.src) {
					return lx.errAt(start, "Unterminated comment")
				}
				if lx.src[lx.i] == '*' && lx.peekRune(1) == '/' {
					lx.advance()
					lx.advance()
					break
				}
				lx.advance()
			}
		default:
			if c >= utf8.RuneSelf {
				r, _ := utf8.DecodeRuneInString(lx.src[lx.i:])
				if r == '\u00a0' || r == '\u2028' || r == '\u2029' || r == '\ufeff' {
					lx.advance()
					continue
				}
			}
			return nil
		}
	}
	return nil
}

func (lx *lexer) next() (token, error) {
	if err := lx.skipSpace(); err != nil {
		return token{}, err
	}
	start := lx.pos()
	if lx.i >= len(lx.src) {
		return token{kind: tokEOF, pos: start, end: lx.i}, nil
	}
	mk := func(kind tokKind, text string) (token, error) {
		return token{kind: kind, text: text, pos: start, end: lx.i}, nil
	}
	c := lx.src[lx.i]
	switch {
	case c == '\'':
		s, err := lx.quoted('\'', "Unterminated string literal")
		if err != nil {
			return token{}, err
		}
		return mk(tokString, s)
	case c == '"':
		s, err := lx.quoted('"', "Unterminated quoted identifier")
		if err != nil {
			return token{}, err
		}
		if s == "" {
			return token{}, lx.errAt(start, "Zero-length quoted identifier")
		}
		return mk(tokQuoted, s)
	case c >= '0' && c <= '9', c == '.' && lx.i+1 < len(lx.src) && lx.src[lx.i+1] >= '0' && lx.src[lx.i+1] <= '9':
		if err := lx.number(start); err != nil {
			return token{}, err
		}
		return mk(tokNumber, lx.src[start.Offset:lx.i])
	}
	r := lx.peekRune(0)
	if isIdentStart(r) {
		for lx.i < len(lx.src) && isIdentPart(lx.peekRune(0)) {
			lx.advance()
		}
		word := lx.src[start.Offset:lx.i]
		return token{kind: tokWord, kw: lookupKeyword(word), text: word, pos: start, end: lx.i}, nil
	}
	lx.advance()
	two := func(second byte, kind2, kind1 tokKind) (token, error) {
		if lx.i < len(lx.src) && lx.src[lx.i] == second {
			lx.advance()
			return mk(kind2, "")
		}
		return mk(kind1, "")
	}
	switch c {
	case '(':
		return mk(tokLParen, "")
	case ')':
		return mk(tokRParen, "")
	case '[':
		return mk(tokLBracket, "")
	case ']':
		return mk(tokRBracket, "")
	case ',':
		return mk(tokComma, "")
	case ';':
		return mk(tokSemi, "")
	case '.':
		return mk(tokDot, "")
	case '+':
		return mk(tokPlus, "")
	case '-':
		return mk(tokMinus, "")
	case '*':
		return mk(tokStar, "")
	case '/':
		return mk(tokSlash, "")
	case '%':
		return mk(tokPercent, "")
	case '?':
		return mk(tokParam, "")
	case '=':
		return two('>', tokArrow, tokEq)
	case '>':
		return two('=', tokGe, tokGt)
	case '<':
		if lx.i < len(lx.src) && lx.src[lx.i] == '>' {
			lx.advance()
			return mk(tokNe, "")
		}
		return two('=', tokLe, tokLt)
	case '!':
		if lx.i < len(lx.src) && lx.src[lx.i] == '=' {
			lx.advance()
			return mk(tokNe, "")
		}
	case '|':
		if lx.i < len(lx.src) && lx.src[lx.i] == '|' {
			lx.advance()
			return mk(tokConcat, "")
		}
	}
	return token{}, lx.errAt(start, "Unexpected character "+quoteRune(r))
}

func quoteRune(r rune) string {
	if r == utf8.RuneError {
		return "(invalid UTF-8)"
	}
	if r < ' ' || r == 0x7f {
		return "(control character)"
	}
	return `"` + string(r) + `"`
}

// quoted reads a literal delimited by q, where a doubled q stands for one q. Returns the value.
func (lx *lexer) quoted(q byte, unterminated string) (string, error) {
	start := lx.pos()
	lx.advance() // opening quote
	var b strings.Builder
	segStart := lx.i
	for {
		if lx.i >= len(lx.src) {
			return "", lx.errAt(start, unterminated)
		}
		if lx.src[lx.i] == q {
			if lx.i+1 < len(lx.src) && lx.src[lx.i+1] == q {
				b.WriteString(lx.src[segStart : lx.i+1])
				lx.advance()
				lx.advance()
				segStart = lx.i
				continue
			}
			seg := lx.src[segStart:lx.i]
			lx.advance()
			if b.Len() == 0 {
				return seg, nil // common case: no escapes, no copy
			}
			b.WriteString(seg)
			return b.String(), nil
		}
		lx.advance()
	}
}

// number scans digits [. digits] [e [+-] digits].
func (lx *lexer) number(start Pos) error {
	digits := func() int {
		n := 0
		for lx.i < len(lx.src) && lx.src[lx.i] >= '0' && lx.src[lx.i] <= '9' {
			lx.advance()
			n++
		}
		return n
	}
	digits()
	if lx.i < len(lx.src) && lx.src[lx.i] == '.' {
		lx.advance()
		digits()
	}
	if lx.i < len(lx.src) && (lx.src[lx.i] == 'e' || lx.src[lx.i] == 'E') {
		lx.advance()
		if lx.i < len(lx.src) && (lx.src[lx.i] == '+' || lx.src[lx.i] == '-') {
			lx.advance()
		}
		if digits() == 0 {
			return lx.errAt(start, "Malformed number "+strings.TrimSpace(lx.src[start.Offset:lx.i]))
		}
	}
	return nil
}
