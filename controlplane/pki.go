package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// pki holds the files shared by every local cluster: one CA that signs the
// serving certificate (127.0.0.1, localhost) and the admin client certificate
// (user "admin", group "system:masters"). Files are created once and reused,
// so kubeconfigs stay valid across restarts.
type pki struct {
	dir string
}

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

func (p pki) caCert() string      { return p.path("ca.crt") }
func (p pki) servingCert() string { return p.path("serving.crt") }
func (p pki) servingKey() string  { return p.path("serving.key") }

// Client identities, both in group system:masters. The controller manager has
// its own user so that tests can tell its writes from everyone else's.
const (
	adminUser             = "admin"
	controllerManagerUser = "system:kube-controller-manager"
)

func (p pki) clientCert(user string) string { return p.path(safeName(user) + ".crt") }
func (p pki) clientKey(user string) string  { return p.path(safeName(user) + ".key") }

// saKey is the service-account signing key of one cluster (each cluster has
// its own, so a token minted by one cluster is refused by the others).
func (p pki) saKey(cluster string) string { return p.path("sa-" + cluster + ".key") }

func (p pki) ensure() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	if !exists(p.caCert()) || !exists(p.path("ca.key")) {
		if err := p.writeCA(); err != nil {
			return err
		}
	}
	caCert, caKey, err := p.loadCA()
	if err != nil {
		return err
	}
	if !exists(p.servingCert()) {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "syncprims-local-apiserver"},
			DNSNames:    []string{"localhost"},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		if err := p.issue(tmpl, caCert, caKey, p.servingCert(), p.servingKey()); err != nil {
			return err
		}
	}
	for _, user := range []string{adminUser, controllerManagerUser} {
		if exists(p.clientCert(user)) {
			continue
		}
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: user, Organization: []string{"system:masters"}},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if err := p.issue(tmpl, caCert, caKey, p.clientCert(user), p.clientKey(user)); err != nil {
			return err
		}
	}
	return nil
}

func (p pki) ensureServiceAccountKey(cluster string) error {
	if exists(p.saKey(cluster)) {
		return nil
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der := x509.MarshalPKCS1PrivateKey(key)
	return writePEM(p.saKey(cluster), "RSA PRIVATE KEY", der, 0o600)
}

func (p pki) writeCA() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "syncprims-local-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(p.path("ca.key"), "EC PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	// A new CA invalidates every certificate it signed.
	for _, f := range []string{p.servingCert(), p.servingKey(), p.clientCert(adminUser), p.clientCert(controllerManagerUser)} {
		_ = os.Remove(f)
	}
	return writePEM(p.caCert(), "CERTIFICATE", der, 0o644)
}

func (p pki) loadCA() (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certDER, err := readPEM(p.caCert())
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(certDER)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := readPEM(p.path("ca.key"))
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(keyDER)
	return cert, key, err
}

func (p pki) issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().AddDate(10, 0, 0)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(keyFile, "EC PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	return writePEM(certFile, "CERTIFICATE", der, 0o644)
}

// writeKubeconfig writes a kubeconfig for one cluster and user with the
// certificates embedded, so the file can be copied into a Secret as it is.
func (p pki) writeKubeconfig(file, cluster string, port int, user string) error {
	ca, err := os.ReadFile(p.caCert())
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(p.clientCert(user))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(p.clientKey(user))
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{
		Server:                   fmt.Sprintf("https://127.0.0.1:%d", port),
		CertificateAuthorityData: ca,
	}
	authInfo := user + "@" + cluster
	cfg.AuthInfos[authInfo] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cert,
		ClientKeyData:         key,
	}
	cfg.Contexts[cluster] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: authInfo}
	cfg.CurrentContext = cluster
	return clientcmd.WriteToFile(*cfg, file)
}

func safeName(user string) string {
	return strings.ReplaceAll(user, ":", "-")
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err)
	}
	return n
}

func writePEM(file, kind string, der []byte, mode os.FileMode) error {
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), mode)
}

func readPEM(file string) ([]byte, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, errors.New(file + ": no PEM block")
	}
	return block.Bytes, nil
}

func exists(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}
