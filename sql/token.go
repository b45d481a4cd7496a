package sql

import "unicode"

// tokKind classifies a lexical token.
type tokKind uint8

const (
	tokEOF      tokKind = iota
	tokWord             // unquoted identifier or keyword
	tokQuoted           // "quoted identifier"
	tokString           // 'string literal'
	tokNumber           // 12, 1.5, 1e3, .5
	tokParam            // ?
	tokLParen           // (
	tokRParen           // )
	tokLBracket         // [
	tokRBracket         // ]
	tokComma            // ,
	tokSemi             // ;
	tokDot              // .
	tokPlus             // +
	tokMinus            // -
	tokStar             // *
	tokSlash            // /
	tokPercent          // %
	tokConcat           // ||
	tokEq               // =
	tokNe               // <> or !=
	tokLt               // <
	tokLe               // <=
	tokGt               // >
	tokGe               // >=
	tokArrow            // =>
)

var tokDisplay = [...]string{
	tokEOF: "<EOF>", tokWord: "an identifier", tokQuoted: "a quoted identifier", tokString: "a string literal",
	tokNumber: "a number", tokParam: `"?"`, tokLParen: `"("`, tokRParen: `")"`, tokLBracket: `"["`,
	tokRBracket: `"]"`, tokComma: `","`, tokSemi: `";"`, tokDot: `"."`, tokPlus: `"+"`, tokMinus: `"-"`,
	tokStar: `"*"`, tokSlash: `"/"`, tokPercent: `"%"`, tokConcat: `"||"`, tokEq: `"="`, tokNe: `"<>"`,
	tokLt: `"<"`, tokLe: `"<="`, tokGt: `">"`, tokGe: `">="`, tokArrow: `"=>"`,
}

// token is one lexical token. For words, text is the source spelling and kw the keyword it
// spells (kwNone if none). For quoted identifiers and strings, text is the unescaped value.
type token struct {
	kind tokKind
	kw   keyword
	text string
	pos  Pos
	end  int // byte offset just past the token
}

// keyword identifies a word the parser treats specially. Reserved keywords cannot be used as
// bare identifiers (column names, aliases); the others are recognised only in context.
type keyword uint8

const (
	kwNone keyword = iota
	// Reserved.
	kwALL
	kwAND
	kwARRAY
	kwAS
	kwBETWEEN
	kwBY
	kwCASE
	kwCAST
	kwCLUSTERED
	kwCROSS
	kwCURRENT_DATE
	kwCURRENT_TIME
	kwCURRENT_TIMESTAMP
	kwDISTINCT
	kwELSE
	kwEND
	kwESCAPE
	kwEXCEPT
	kwEXISTS
	kwEXPLAIN
	kwEXTEND
	kwFALSE
	kwFETCH
	kwFILTER
	kwFROM
	kwFULL
	kwGROUP
	kwHAVING
	kwIN
	kwINNER
	kwINSERT
	kwINTERSECT
	kwINTERVAL
	kwINTO
	kwIS
	kwJOIN
	kwLATERAL
	kwLEFT
	kwLIKE
	kwLIMIT
	kwLOCALTIME
	kwLOCALTIMESTAMP
	kwNATURAL
	kwNOT
	kwNULL
	kwOFFSET
	kwON
	kwOR
	kwORDER
	kwOUTER
	kwOVER
	kwOVERWRITE
	kwPARTITION
	kwPARTITIONED
	kwREPLACE
	kwRIGHT
	kwSELECT
	kwSET
	kwSIMILAR
	kwTABLE
	kwTHEN
	kwTRUE
	kwUNION
	kwUNKNOWN
	kwUNNEST
	kwUSING
	kwVALUES
	kwWHEN
	kwWHERE
	kwWINDOW
	kwWITH
	kwLastReserved
	// Contextual.
	kwASC
	kwASYMMETRIC
	kwBOTH
	kwCEIL
	kwCEILING
	kwCURRENT
	kwDATE
	kwDESC
	kwEXTERN
	kwEXTRACT
	kwFIRST
	kwFLOOR
	kwFOLLOWING
	kwFOR
	kwLAST
	kwLEADING
	kwLOCAL
	kwNEXT
	kwNULLS
	kwONLY
	kwPLAN
	kwPOSITION
	kwPRECEDING
	kwPRECISION
	kwRANGE
	kwROW
	kwROWS
	kwSUBSTRING
	kwSYMMETRIC
	kwTIME
	kwTIMESTAMP
	kwTIMESTAMPADD
	kwTIMESTAMPDIFF
	kwTIME_FLOOR
	kwTO
	kwTRAILING
	kwTRIM
	kwTYPE
	kwUNBOUNDED
	kwVARYING
	kwZONE
	kwCount
)

var keywordNames = [kwCount]string{
	kwALL: "ALL", kwAND: "AND", kwARRAY: "ARRAY", kwAS: "AS", kwBETWEEN: "BETWEEN", kwBY: "BY",
	kwCASE: "CASE", kwCAST: "CAST", kwCLUSTERED: "CLUSTERED", kwCROSS: "CROSS",
	kwCURRENT_DATE: "CURRENT_DATE", kwCURRENT_TIME: "CURRENT_TIME", kwCURRENT_TIMESTAMP: "CURRENT_TIMESTAMP",
	kwDISTINCT: "DISTINCT", kwELSE: "ELSE", kwEND: "END", kwESCAPE: "ESCAPE", kwEXCEPT: "EXCEPT",
	kwEXISTS: "EXISTS", kwEXPLAIN: "EXPLAIN", kwEXTEND: "EXTEND", kwFALSE: "FALSE", kwFETCH: "FETCH",
	kwFILTER: "FILTER", kwFROM: "FROM", kwFULL: "FULL", kwGROUP: "GROUP", kwHAVING: "HAVING", kwIN: "IN",
	kwINNER: "INNER", kwINSERT: "INSERT", kwINTERSECT: "INTERSECT", kwINTERVAL: "INTERVAL", kwINTO: "INTO",
	kwIS: "IS", kwJOIN: "JOIN", kwLATERAL: "LATERAL", kwLEFT: "LEFT", kwLIKE: "LIKE", kwLIMIT: "LIMIT",
	kwLOCALTIME: "LOCALTIME", kwLOCALTIMESTAMP: "LOCALTIMESTAMP", kwNATURAL: "NATURAL", kwNOT: "NOT",
	kwNULL: "NULL", kwOFFSET: "OFFSET", kwON: "ON", kwOR: "OR", kwORDER: "ORDER", kwOUTER: "OUTER",
	kwOVER: "OVER", kwOVERWRITE: "OVERWRITE", kwPARTITION: "PARTITION", kwPARTITIONED: "PARTITIONED",
	kwREPLACE: "REPLACE", kwRIGHT: "RIGHT", kwSELECT: "SELECT", kwSET: "SET", kwSIMILAR: "SIMILAR",
	kwTABLE: "TABLE", kwTHEN: "THEN", kwTRUE: "TRUE", kwUNION: "UNION", kwUNKNOWN: "UNKNOWN",
	kwUNNEST: "UNNEST", kwUSING: "USING", kwVALUES: "VALUES", kwWHEN: "WHEN", kwWHERE: "WHERE",
	kwWINDOW: "WINDOW", kwWITH: "WITH",

	kwASC: "ASC", kwASYMMETRIC: "ASYMMETRIC", kwBOTH: "BOTH", kwCEIL: "CEIL", kwCEILING: "CEILING",
	kwCURRENT: "CURRENT", kwDATE: "DATE", kwDESC: "DESC", kwEXTERN: "EXTERN", kwEXTRACT: "EXTRACT",
	kwFIRST: "FIRST", kwFLOOR: "FLOOR", kwFOLLOWING: "FOLLOWING", kwFOR: "FOR", kwLAST: "LAST",
	kwLEADING: "LEADING", kwLOCAL: "LOCAL", kwNEXT: "NEXT", kwNULLS: "NULLS", kwONLY: "ONLY", kwPLAN: "PLAN",
	kwPOSITION: "POSITION", kwPRECEDING: "PRECEDING", kwPRECISION: "PRECISION", kwRANGE: "RANGE",
	kwROW: "ROW", kwROWS: "ROWS", kwSUBSTRING: "SUBSTRING", kwSYMMETRIC: "SYMMETRIC", kwTIME: "TIME",
	kwTIMESTAMP: "TIMESTAMP", kwTIMESTAMPADD: "TIMESTAMPADD", kwTIMESTAMPDIFF: "TIMESTAMPDIFF",
	kwTIME_FLOOR: "TIME_FLOOR", kwTO: "TO", kwTRAILING: "TRAILING", kwTRIM: "TRIM", kwTYPE: "TYPE",
	kwUNBOUNDED: "UNBOUNDED", kwVARYING: "VARYING", kwZONE: "ZONE",
}

var keywordByName = func() map[string]keyword {
	m := make(map[string]keyword, kwCount)
	for k, name := range keywordNames {
		if name != "" {
			m[name] = keyword(k)
		}
	}
	return m
}()

// keywordQuoted holds each keyword in double quotes, as listed in error messages.
var keywordQuoted = func() (q [kwCount]string) {
	for k, name := range keywordNames {
		q[k] = `"` + name + `"`
	}
	return q
}()

func (k keyword) String() string { return keywordNames[k] }

func (k keyword) reserved() bool { return k > kwNone && k < kwLastReserved }

// lookupKeyword finds the keyword spelled by word, ignoring ASCII case, without allocating.
func lookupKeyword(word string) keyword {
	const maxLen = 20 // longer than any keyword
	if len(word) > maxLen {
		return kwNone
	}
	var buf [maxLen]byte
	for i := 0; i < len(word); i++ {
		c := word[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	return keywordByName[string(buf[:len(word)])]
}

// IsReserved reports whether word (in any case) is a reserved keyword that must be double-quoted
// to be used as an identifier.
func IsReserved(word string) bool { return lookupKeyword(word).reserved() }

func isIdentStart(r rune) bool {
	return r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || (r >= 0x80 && unicode.IsLetter(r))
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || ('0' <= r && r <= '9') || r == '$' || (r >= 0x80 && unicode.IsDigit(r))
}
