package config

import "strings"

// Markdown renders Keys as the README's Configuration table.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| property | default | meaning |\n|---|---|---|\n")
	for _, k := range Keys {
		def := k.DefaultDoc
		if def == "" && k.Default != "" {
			def = "`" + k.Default + "`"
		}
		b.WriteString("| `" + k.Name + "` | " + def + " | " + k.Doc + " |\n")
	}
	return b.String()
}
