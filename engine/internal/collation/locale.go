package collation

import "strings"

// localeDefaults are the per-locale defaults a locale's ICU data sets
// where they differ from the root collation's (caseFirst off, alternate
// non-ignorable, normalization false, backwards false).
type localeDefaults struct {
	caseFirst     string
	alternate     string
	normalization bool
	backwards     bool
}

// locales are the locale IDs MongoDB 7.0 accepts, as the manual's
// "Collation Locales and Default Parameters" table lists them, with the
// defaults that page gives where they differ from the root's.
// https://www.mongodb.com/docs/v7.0/reference/collation-locales-defaults/
var locales = map[string]localeDefaults{}

func init() {
	plain := strings.Fields(`af sq am ar ar@collation=compat hy az be bs bs_Cyrl bg ca chr zh
		zh@collation=big5han zh@collation=gb2312han zh@collation=unihan zh@collation=zhuyin
		zh_Hant hr cs nl dz en en_US en_US_POSIX eo et ee fo fil fi fi@collation=traditional
		fr gl ka de de@collation=eor de@collation=phonebook de_AT de_AT@collation=phonebook el
		ha haw he hu is ig smn id ga it ja kl kk km ko ky lkt lo lv ln lt dsb lb mk ms mt mn
		se nb nn om ps fa fa_AF pl pt pa ro ru sr sr_Latn sk sl es es@collation=traditional
		sw sv tr uk hsb ur ug wae cy yi yo zu to ko@collation=searchjl`)
	for _, l := range plain {
		locales[l] = localeDefaults{}
	}
	normalized := strings.Fields(`as az@collation=search bn bn@collation=traditional
		bs@collation=search ca@collation=search hr@collation=search cs@collation=search
		da@collation=search fi@collation=search gl@collation=search de@collation=search gu
		he@collation=search hi hu@collation=search is@collation=search kl@collation=search
		kn kok ko@collation=search ml mr my ne or si sk@collation=search es@collation=search
		sv@collation=search ta te bo tr@collation=search vi vi@collation=traditional
		sr_Latn@collation=search ar@collation=search`)
	for _, l := range normalized {
		locales[l] = localeDefaults{normalization: true}
	}
	locales["da"] = localeDefaults{caseFirst: "upper"}
	locales["mt"] = localeDefaults{caseFirst: "upper"}
	locales["th"] = localeDefaults{alternate: "shifted", normalization: true}
	locales["fr_CA"] = localeDefaults{backwards: true}
}

// suggestLocale returns the locale ICU would have fallen back to for an
// unsupported ID, as mongod's "Did you mean" hint names it, or "" when
// ICU would use the root collation.
func suggestLocale(id string) string {
	canon := strings.ReplaceAll(id, "-", "_")
	if i := strings.IndexByte(canon, '@'); i >= 0 {
		canon = canon[:i]
	}
	parts := strings.Split(canon, "_")
	parts[0] = strings.ToLower(parts[0])
	for i := 1; i < len(parts); i++ {
		if len(parts[i]) == 2 {
			parts[i] = strings.ToUpper(parts[i])
		} else if len(parts[i]) == 4 {
			parts[i] = strings.ToUpper(parts[i][:1]) + strings.ToLower(parts[i][1:])
		}
	}
	for n := len(parts); n > 0; n-- {
		cand := strings.Join(parts[:n], "_")
		if _, ok := locales[cand]; ok && cand != id {
			return cand
		}
	}
	return ""
}
