package host

// Version is the rlmpl runtime version, reported by rlm_version/1 and
// `rlmpl version`.
const Version = "0.1.0"
