// Package testcert generates a throwaway certificate authority and
// certificates signed by it, for tests of TLS serving. Nothing it makes is
// fit for production: keys are fresh ECDSA P-256 keys valid for a day.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Files are the PEM files Write produced.
type Files struct {
	// CA is the certificate authority's certificate.
	CA string
	// Cert and Key are the server's certificate (for localhost,
	// 127.0.0.1 and ::1) and private key.
	Cert, Key string
	// ClientCert and ClientKey are a client certificate signed by CA.
	ClientCert, ClientKey string
	// ClientPEM holds the client certificate and key in one file, as
	// mongosh's --tlsCertificateKeyFile and the URI option want.
	ClientPEM string
}

// Write generates a CA, a server and a client certificate and writes them
// under dir, failing t on any error.
func Write(t testing.TB, dir string) Files {
	t.Helper()
	caKey := newKey(t)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "formwork test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		key := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			DNSNames:     []string{"localhost"},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	srvDER, srvKey := leaf(2, "localhost", x509.ExtKeyUsageServerAuth)
	cliDER, cliKey := leaf(3, "formwork test client", x509.ExtKeyUsageClientAuth)
	f := Files{
		CA:         filepath.Join(dir, "ca.pem"),
		Cert:       filepath.Join(dir, "server.crt"),
		Key:        filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "client.crt"),
		ClientKey:  filepath.Join(dir, "client.key"),
		ClientPEM:  filepath.Join(dir, "client.pem"),
	}
	write(t, f.CA, certPEM(caDER))
	write(t, f.Cert, certPEM(srvDER))
	write(t, f.Key, keyPEM(t, srvKey))
	write(t, f.ClientCert, certPEM(cliDER))
	write(t, f.ClientKey, keyPEM(t, cliKey))
	write(t, f.ClientPEM, append(certPEM(cliDER), keyPEM(t, cliKey)...))
	return f
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyPEM(t testing.TB, k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func write(t testing.TB, path string, b []byte) {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
